variable "environment" {
  type = string
}

variable "component" {
  type = string
}

output "name" {
  value = "${var.environment}-${var.component}"
}

output "version" {
  value = "__VERSION__"
}
