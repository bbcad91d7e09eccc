"""What a sweep or trial reads, resolved from the cluster and the store: the condition, the
endpoints and their API keys, the dataset (builtin, ConfigMap, object store, registry, git
package), the relay target and the sweep's object store.

Below sweep/, trial/, preflight/, janitor/ and cli/, which all read the same inputs the same
way; it builds on the pure rooms (condition/, dataset/) and the edge adapters (kube/, relay/,
storage/). The I/O is in fetch/: resolve.py (ConfigMaps, Secrets, Services, the store),
datasets.py and git_datasets.py (a dataset on local disk, git.py over git). errors.py is the
one error they raise, naming the spec field to fix.
"""
