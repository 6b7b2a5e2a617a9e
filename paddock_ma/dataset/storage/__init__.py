"""Where a dataset lives: a local or shared-filesystem directory, or a prefix of an object store
(``s3://``, ``gs://``, ``abfs://``), behind one interface (``store.Store``, opened by ``store.open_store``).

* ``store``: the interface every writer and reader uses (paths relative to the dataset's root), what a
  store must offer, where credentials come from.
* ``opening``: ``open_store(out)``, the backend ``out`` names (a path or a URI).
* ``local``: a directory (``Disk``: temporary, fsync, rename; the manifest committed under the lock).
* ``objects``: an object store through pyarrow's filesystems (reads, listings, deletes) plus the store's
  own conditional writes (create-only objects, the manifest replaced only if unchanged: ``conditions``).
* ``conditions``: create-only and if-unchanged writes for each object store (S3 through boto3).
* ``lease``: one collector per object-store dataset: a lease object created once and renewed.
"""
