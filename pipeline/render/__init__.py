"""Reports as documents (document) and their folders on disk (folder), for every product."""
