"""The sweep's reconcile (reconcile.py) and the I/O around it: the lock and summary documents in
the object store (documents.py) and the watch of settled trials (settled.py). The decisions it
applies are the pure modules of sweep/."""
