"""Worker runtimes spawned by the kforge binary: the trusted judge and the untrusted candidate."""
