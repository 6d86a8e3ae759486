"""Reports as documents and their folders on disk, and the figures every product draws."""
