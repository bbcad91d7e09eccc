"""buzz-operator entry point: runs the kopf operator."""


def main() -> None:
    raise SystemExit("buzz-operator: the operator arrives with issue 7")
