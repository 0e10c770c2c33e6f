variable "environment" {
  type    = string
  default = "dev"
}

# A sibling module in the same repository: the archive holds the whole tree, so this works.
module "name" {
  source      = "../naming"
  environment = var.environment
  component   = "vpc"
}

output "vpc_name" {
  value = module.name.name
}

output "cidr_block" {
  value = "10.0.0.0/16"
}

output "version" {
  value = "__VERSION__"
}
