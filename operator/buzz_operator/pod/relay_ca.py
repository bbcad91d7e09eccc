"""The relay's private CA in the pod (spec.relay.caBundle): appended to the CA file every agent
trusts through SSL_CERT_FILE (condition/agent_env.py, paths.REMOTE_CA_BUNDLE), so agents dial a
wss:// relay whose certificate that CA signed, and still reach public TLS hosts (model endpoints)
with the stack's public roots.

The launch exec (pod/launch_script.py) unpacks the CA as RELAY_CA_NAME and runs
INSTALL_RELAY_CA after the trust store's seed. Idempotent, like every launch step: the stack's
own bundle is kept once (PUBLIC_NAME) and the trusted file is always rebuilt from it plus the
private CA, so a resumed launch never appends twice.
The file is replaced by rename, never rewritten in place: the task container may run as any user,
/opt/buzz is a world-writable emptyDir, and the stack's file belongs to the init container's user.
"""

from __future__ import annotations

from buzz_operator.condition.paths import REMOTE_CA_BUNDLE, REMOTE_ROOT

BUNDLE_NAME = REMOTE_CA_BUNDLE.removeprefix(f"{REMOTE_ROOT}/")  # ca-certificates.crt
RELAY_CA_NAME = "relay-ca.crt"
PUBLIC_NAME = "ca-certificates.public.crt"  # the stack's own bundle, kept as it shipped


def combine_script(root: str = REMOTE_ROOT) -> str:
    """Shell that makes `<root>/ca-certificates.crt` the stack's public roots followed by the
    private CA; its last line is `installed <certificates in the result>`. `root` is a parameter
    so the very script can be run against a directory on the host in tests."""
    bundle, public, private = (f"{root}/{BUNDLE_NAME}", f"{root}/{PUBLIC_NAME}",
                               f"{root}/{RELAY_CA_NAME}")
    return (
        "set -e\n"
        f"[ -s {public} ] || cp {bundle} {public}\n"
        # a newline between the two: a bundle whose last line lacks one would glue END to BEGIN
        f"{{ cat {public}; echo; cat {private}; }} > {bundle}.tmp\n"
        f"mv -f {bundle}.tmp {bundle}\n"
        f'echo "installed $(grep -c -- "-----BEGIN CERTIFICATE-----" {bundle})"'
    )


INSTALL_RELAY_CA = combine_script()

