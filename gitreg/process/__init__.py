"""What runs the process: the embedded server, its connections and its forked workers."""
