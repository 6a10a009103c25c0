"""Files: the atomic writer every file goes through, PC2 point caches and the model cache."""
