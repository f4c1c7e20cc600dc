resource "terraform_data" "inner" {
  input = {
    note  = "plain-child-note"
    token = sensitive("child-module-secret-3390")
  }
}
