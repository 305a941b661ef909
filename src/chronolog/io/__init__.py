"""Reading input streams and writing answer streams."""
