"""inputs/ reading the world: ConfigMaps, Secrets, Services and the store (resolve.py), a
dataset on local disk (datasets.py) or in git (git_datasets.py over git.py)."""
