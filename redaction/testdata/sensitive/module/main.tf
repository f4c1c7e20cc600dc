terraform {
  required_providers {
    local = { source = "hashicorp/local" }
  }
}

variable "db_password" {
  type      = string
  sensitive = true
}

variable "region" {
  type    = string
  default = "plain-region-eu1"
}

resource "terraform_data" "secret" {
  input = {
    api_token = sensitive("tdata-sensitive-token-7731")
    label     = "plain-label-visible"
    pin       = sensitive(73310042)
    hosts = ["plain-host-one", sensitive("list-sensitive-elem-4410")]
    tags  = tomap({ env = "plain-env-prod", key = sensitive("map-sensitive-value-8823") })
  }
}

resource "terraform_data" "plain" {
  input = "plain-terraform-data-input"
}

resource "local_sensitive_file" "cred" {
  filename = "${path.module}/out/cred.txt"
  content  = "local-sensitive-content-6632"
}

resource "local_file" "nested" {
  filename = "${path.module}/out/nested.txt"
  content  = jsonencode({ user = "plain-user-name", pass = var.db_password })
}

module "child" {
  source = "./child"
}

output "db_dsn" {
  value     = "postgres://app:${var.db_password}@db.internal:5432/app"
  sensitive = true
}

output "region" {
  value = var.region
}

output "secret_token" {
  value     = terraform_data.secret.output.api_token
  sensitive = true
}
