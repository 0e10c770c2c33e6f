"""What operators see: status reports, `gitreg list`, Prometheus metrics."""
