#include "runner/plan/data_loss.hpp"

#include <gtest/gtest.h>

#include "runner/plan/plan_analysis.hpp"

namespace takosumi::runner {
namespace {

protocol::ResourceChange change(const std::string& address, const std::string& type,
                                std::vector<std::string> actions) {
  return classify_change(address, type, std::move(actions));
}

TEST(GlobMatch, StarMatchesAnyRunAndTheRestIsLiteral) {
  EXPECT_TRUE(glob_match("*_db_instance", "aws_db_instance"));
  EXPECT_FALSE(glob_match("*_db_instance", "aws_db_instance_role"));
  EXPECT_TRUE(glob_match("*_database*", "google_sql_database_instance"));
  EXPECT_TRUE(glob_match("*dynamodb*", "aws_dynamodb_table"));
  EXPECT_TRUE(glob_match("local_file", "local_file"));
  EXPECT_FALSE(glob_match("local_file", "local_file2"));
  EXPECT_FALSE(glob_match("*_bucket", "aws_s3_bucket_policy"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXbYbZ"));
  EXPECT_FALSE(glob_match("", "x"));
}

TEST(DataLoss, DeleteOfADataBearingTypeIsMarked) {
  auto marks = mark_data_loss({change("local_file.f", "local_file", {"delete"})}, {},
                              {{"local_file.f", "delete_because_no_resource_config"}});
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0].address, "local_file.f");
  EXPECT_EQ(marks[0].type, "local_file");
  EXPECT_EQ(marks[0].action, "delete");
  EXPECT_EQ(marks[0].reason,
            "type local_file matches data-bearing pattern local_file "
            "(delete_because_no_resource_config)");
}

TEST(DataLoss, ReplaceInEitherOrderIsMarkedReplace) {
  auto marks = mark_data_loss({change("aws_db_instance.db", "aws_db_instance", {"delete", "create"}),
                               change("aws_s3_bucket.b", "aws_s3_bucket", {"create", "delete"})},
                              {});
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0].action, "replace");
  EXPECT_EQ(marks[0].reason, "type aws_db_instance matches data-bearing pattern *_db_instance");
  EXPECT_EQ(marks[1].action, "replace");
  EXPECT_EQ(marks[1].reason, "type aws_s3_bucket matches data-bearing pattern *_bucket");
}

TEST(DataLoss, CreateUpdateForgetAndOtherTypesAreNotMarked) {
  auto marks = mark_data_loss({change("aws_db_instance.new", "aws_db_instance", {"create"}),
                               change("aws_ebs_volume.v", "aws_ebs_volume", {"update"}),
                               change("local_file.kept", "local_file", {"forget"}),
                               change("terraform_data.x", "terraform_data", {"delete"}),
                               change("aws_iam_role.r", "aws_iam_role", {"delete", "create"})},
                              {});
  EXPECT_TRUE(marks.empty());
}

TEST(DataLoss, CustomPatternsReplaceTheDefaults) {
  const std::vector<std::string> patterns{"terraform_data", "null_*"};
  auto marks = mark_data_loss({change("terraform_data.x", "terraform_data", {"delete"}),
                               change("null_resource.n", "null_resource", {"create", "delete"}),
                               change("local_file.f", "local_file", {"delete"})},
                              patterns);
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0].address, "terraform_data.x");
  EXPECT_EQ(marks[1].address, "null_resource.n");
  EXPECT_EQ(marks[1].reason, "type null_resource matches data-bearing pattern null_*");
}

TEST(DataLoss, DefaultsCoverTheCommonDataStores) {
  for (const char* type : {"aws_db_instance", "aws_rds_cluster", "google_sql_database_instance",
                           "aws_s3_bucket", "google_storage_bucket", "aws_ebs_volume",
                           "google_compute_disk", "aws_efs_file_system", "aws_dynamodb_table",
                           "azurerm_redis_cache", "aws_elasticache_cluster", "aws_db_snapshot",
                           "local_sensitive_file"}) {
    auto marks = mark_data_loss({change("x.y", type, {"delete"})}, {});
    EXPECT_EQ(marks.size(), 1u) << type;
  }
}

}  // namespace
}  // namespace takosumi::runner
