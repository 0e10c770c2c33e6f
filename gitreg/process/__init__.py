"""What runs the process: the embedded server, its connections, forked workers, CPU budget and
frozen heap, and the TLS certificates of `gitreg demo` and `gitreg cert`."""
