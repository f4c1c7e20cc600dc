#include <gtest/gtest.h>

#include "common/error_codes.hpp"
#include "crypto/keys.hpp"
#include "protocol/failure_codes.hpp"
#include "protocol/job_manifest.hpp"
#include "protocol/output_type.hpp"
#include "protocol/registration_request.hpp"
#include "protocol/run_report.hpp"
#include "tests/support/test_manifest.hpp"

namespace takosumi::protocol {
namespace {

JobManifest sample_apply() {
  auto m = testing::test_manifest("run_1", RunType::apply,
                                  {"file:///repo", std::string(40, 'a'), "modules/app"});
  m.attempt = 2;
  m.agent_id = "agt_1";
  m.prior_state = PriorState{"sv_1", 3, std::string(64, 'b'), 7, "lin", "ZGVr"};
  m.saved_plan = SavedPlanRef{std::string(64, 'c'), "cGxhbg=="};
  m.variables = {{"name", "demo"}};
  m.output_allowlist = {{"url", {"endpoint", "string", true}}};
  m.control_public_key = "cGs=";
  m.issued_at = 100;
  m.expires_at = 200;
  m.nonce = "n1";
  return m;
}

TEST(JobManifest, RoundTripsEveryField) {
  auto m = sample_apply();
  auto back = job_manifest_from_json(to_json(m));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->run_id, "run_1");
  EXPECT_EQ(back->attempt, 2);
  EXPECT_EQ(back->type, RunType::apply);
  EXPECT_EQ(back->source.module_path, "modules/app");
  ASSERT_TRUE(back->prior_state);
  EXPECT_EQ(back->prior_state->generation, 3);
  ASSERT_TRUE(back->saved_plan);
  EXPECT_EQ(back->saved_plan->digest, std::string(64, 'c'));
  EXPECT_EQ(back->output_allowlist.at("url").from, "endpoint");
  EXPECT_TRUE(back->output_allowlist.at("url").required);
  EXPECT_EQ(back->variables.at("name"), "demo");
}

TEST(JobManifest, ApplyWithoutSavedPlanIsInvalid) {
  auto o = to_json(sample_apply());
  o.erase("savedPlan");
  auto r = job_manifest_from_json(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::kManifestInvalid);
  EXPECT_NE(r.error().message.find("savedPlan"), std::string::npos);
}

TEST(JobManifest, WrongTypeNamesTheField) {
  auto o = to_json(sample_apply());
  o["attempt"] = "two";
  auto r = job_manifest_from_json(o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("attempt"), std::string::npos);
}

TEST(RunReport, RoundTripsAndRequiresFailureCode) {
  RunReport r;
  r.lease_token = "l";
  r.attempt = 1;
  r.status = "succeeded";
  r.resource_changes.push_back({"local_file.a", "local_file", {"delete", "create"}, false, true});
  r.new_state = NewStateDescriptor{"aa", "bb", 3, "lin", 1};
  r.outputs["url"] = "http://x";
  r.refused_outputs.push_back({"dsn", "a URL with a password in its userinfo"});
  auto back = run_report_from_json(to_json(r));
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->resource_changes.size(), 1u);
  EXPECT_TRUE(back->resource_changes[0].is_replace);
  EXPECT_EQ(back->new_state->prior_generation, 1);
  EXPECT_EQ(back->outputs.at("url").as_string(), "http://x");
  ASSERT_EQ(back->refused_outputs.size(), 1u);
  EXPECT_EQ(back->refused_outputs[0].name, "dsn");

  auto bad = to_json(r);
  bad["status"] = "failed";
  EXPECT_FALSE(run_report_from_json(bad));
}

TEST(RunReport, FailureCodeIsARunFailureCode) {
  EXPECT_TRUE(is_run_failure_code(errc::kOpentofuPlanFailed));
  EXPECT_TRUE(is_run_failure_code(errc::kInterrupted));
  EXPECT_TRUE(is_run_failure_code(errc::kStateVersionSuperseded));
  EXPECT_FALSE(is_run_failure_code(errc::kIoError));
  EXPECT_FALSE(is_run_failure_code(""));
  RunReport r;
  r.lease_token = "l";
  r.attempt = 1;
  r.status = "failed";
  r.failure_code = errc::kOpentofuPlanFailed;
  r.failure_message = "exit 1";
  auto kept = run_report_from_json(to_json(r));
  ASSERT_TRUE(kept) << kept.error().message;
  EXPECT_EQ(kept->failure_code, errc::kOpentofuPlanFailed);
  EXPECT_EQ(kept->failure_message, "exit 1");
  // Not refused (that would strand the Run): kept whole under internal.
  r.failure_code = "io_error";
  auto wrapped = run_report_from_json(to_json(r));
  ASSERT_TRUE(wrapped) << wrapped.error().message;
  EXPECT_EQ(wrapped->failure_code, errc::kInternal);
  EXPECT_EQ(wrapped->failure_message, "io_error: exit 1");
}

TEST(OutputType, KnownTypesMatchAndAnUnknownOneIsRefused) {
  EXPECT_TRUE(*output_type_matches(json::value("x"), "string"));
  EXPECT_FALSE(*output_type_matches(json::value("8080"), "number"));
  EXPECT_TRUE(*output_type_matches(json::value(8080), "number"));
  EXPECT_TRUE(*output_type_matches(json::value(true), "bool"));
  EXPECT_TRUE(*output_type_matches(json::array{1, 2}, "any"));
  EXPECT_EQ(output_kind(json::array{}), "list");
  EXPECT_FALSE(is_output_type("map"));
  auto unknown = output_type_matches(json::value("x"), "map");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, errc::kInvalidArgument);
  EXPECT_NE(unknown.error().message.find("unknown output type \"map\""), std::string::npos);
}

TEST(RunReport, DataLossMarksAreReadWholeOrRefused) {
  auto marks = data_loss_from_text(
      R"([{"address":"aws_db_instance.a","type":"aws_db_instance","action":"delete"}])");
  ASSERT_TRUE(marks) << marks.error().message;
  ASSERT_EQ(marks->size(), 1u);
  EXPECT_EQ((*marks)[0].reason, "");
  for (const char* text : {"[1]", R"([{"address":"a.b"}])", "{}", "[",
                           R"([{"address":"a","type":"t","action":"delete","x":1}])"}) {
    auto bad = data_loss_from_text(text);
    ASSERT_FALSE(bad) << text;
    EXPECT_EQ(bad.error().code, errc::kInvalidArgument) << text;
  }
}

TEST(RunReport, DataLossAndDriftRoundTrip) {
  RunReport r;
  r.lease_token = "l";
  r.attempt = 1;
  r.status = "succeeded";
  r.data_loss.push_back({"aws_db_instance.main", "aws_db_instance", "replace", "type matches *_db_*"});
  r.drift = DriftReport{"drift", {{"local_file.a", "local_file", "delete", {"content"}}}};
  auto back = run_report_from_json(to_json(r));
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->data_loss.size(), 1u);
  EXPECT_EQ(back->data_loss[0].action, "replace");
  ASSERT_TRUE(back->drift);
  EXPECT_EQ(back->drift->status, "drift");
  ASSERT_EQ(back->drift->resources.size(), 1u);
  EXPECT_EQ(back->drift->resources[0].attributes, std::vector<std::string>{"content"});

  auto bad = to_json(r);
  bad["drift"].as_object()["status"] = "maybe";
  EXPECT_FALSE(run_report_from_json(bad));
}

TEST(RunReport, AReportOfMoreThanTenThousandResourcesIsRead) {
  RunReport r;
  r.lease_token = "l";
  r.attempt = 1;
  r.status = "succeeded";
  for (int i = 0; i < 12000; ++i)
    r.resource_changes.push_back({"terraform_data.r[" + std::to_string(i) + "]", "terraform_data",
                                  {"create"}, false, false});
  auto back = run_report_from_text(boost::json::serialize(to_json(r)));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->resource_changes.size(), 12000u);
}

TEST(RunReport, ResultTooLargeKeepsTheStateAndDropsTheLists) {
  RunReport r;
  r.lease_token = "l";
  r.attempt = 2;
  r.status = "succeeded";
  r.resource_changes.push_back({"a.b", "a", {"create"}, false, false});
  r.data_loss.push_back({"a.b", "a", "replace", "why"});
  r.refused_outputs.push_back({"o", "why"});
  r.outputs["o"] = "v";
  r.new_state = NewStateDescriptor{std::string(64, 'a'), std::string(64, 'b'), 3, "lin", 1};
  r.source_commit = "c";
  const auto small = result_too_large(r, "too big");
  EXPECT_EQ(small.status, "failed");
  EXPECT_EQ(small.failure_code, "result_too_large");
  EXPECT_TRUE(is_run_failure_code(small.failure_code));
  EXPECT_EQ(small.failure_message, "too big; the Run itself succeeded");
  RunReport cancelled = r;
  cancelled.status = "failed";
  cancelled.failure_code = "cancelled";
  cancelled.failure_message = "cancelled by the operator";
  EXPECT_EQ(result_too_large(cancelled, "too big").failure_message,
            "too big; the Run itself failed (cancelled: cancelled by the operator)")
      << "how the Run ended is kept";
  cancelled.failure_message = std::string(kMaxFailureMessageBytes - 3, 'x') + "\u00e9\u00e9";
  const auto cut = result_too_large(cancelled, "too big");
  EXPECT_LE(cut.failure_message.size(), kMaxFailureMessageBytes);
  EXPECT_TRUE(run_report_from_json(to_json(cut))) << "a long message must not get it refused";
  EXPECT_TRUE(small.resource_changes.empty());
  EXPECT_TRUE(small.data_loss.empty());
  EXPECT_TRUE(small.refused_outputs.empty());
  EXPECT_TRUE(small.outputs.empty());
  ASSERT_TRUE(small.new_state);
  EXPECT_EQ(small.new_state->serial, 3);
  EXPECT_EQ(small.attempt, 2);
  EXPECT_EQ(small.lease_token, "l");
  EXPECT_EQ(small.source_commit, "c");
  EXPECT_TRUE(run_report_from_json(to_json(small))) << "the smaller report must itself be valid";
}

TEST(RunType, EveryTypeRoundTripsAndRefreshIsNotOne) {
  for (auto t : {RunType::plan, RunType::apply, RunType::destroy_plan, RunType::drift_check})
    EXPECT_EQ(run_type_from_string(to_string(t)), t);
  EXPECT_FALSE(run_type_from_string("refresh"));
}

TEST(KnownFields, RunReportRefusesUnknownFieldsAtEveryLevel) {
  RunReport r;
  r.lease_token = "l";
  r.attempt = 1;
  r.status = "succeeded";
  r.new_state = NewStateDescriptor{"aa", "bb", 3, "lin", 1};
  r.data_loss.push_back({"aws_db_instance.a", "aws_db_instance", "delete", "type"});
  ASSERT_TRUE(run_report_from_json(to_json(r)));
  auto top = to_json(r);
  top["planDigst"] = "x";
  auto a = run_report_from_json(top);
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("unknown field \"planDigst\""), std::string::npos) << a.error().message;
  auto state = to_json(r);
  state["newState"].as_object()["priorGen"] = 1;
  auto b = run_report_from_json(state);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("unknown field \"newState.priorGen\""), std::string::npos)
      << b.error().message;
  auto mark = to_json(r);
  mark["dataLoss"].as_array()[0].as_object()["accepted"] = true;
  auto c = run_report_from_json(mark);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("unknown field \"accepted\""), std::string::npos) << c.error().message;
}

TEST(RegistrationRequest, RoundTripsAndRefusesWhatTheControlPlaneCannotRecord) {
  const std::string key = crypto::SignKeyPair::generate().public_key.to_base64();
  const std::string box = crypto::BoxKeyPair::generate().public_key.to_base64();
  const RegistrationRequest sent{{"worker-1", "1.2.3", {"gpu", "eu"}, 4, box, key}, "ch", "sig"};
  auto read = registration_request_from_json(to_json(sent));
  ASSERT_TRUE(read) << read.error().to_string();
  EXPECT_EQ(read->agent.name, "worker-1");
  EXPECT_EQ(read->agent.version, "1.2.3");
  EXPECT_EQ(read->agent.labels, (std::vector<std::string>{"gpu", "eu"}));
  EXPECT_EQ(read->agent.capacity, 4);
  EXPECT_EQ(read->agent.box_public_key, box);
  EXPECT_EQ(read->agent.sign_public_key, key);
  EXPECT_EQ(read->challenge, "ch");
  EXPECT_EQ(read->signature, "sig");

  auto refused = [&](const char* field, boost::json::value v, const char* says) {
    auto body = to_json(sent);
    if (v.is_null())
      body.erase(field);
    else
      body[field] = std::move(v);
    auto r = registration_request_from_json(body);
    ASSERT_FALSE(r) << field;
    EXPECT_EQ(r.error().code, errc::kInvalidArgument);
    EXPECT_NE(r.error().message.find(says), std::string::npos) << r.error().message;
  };
  refused("name", "", "must not be empty");
  refused("capacity", 0, "between 1 and 1024");
  refused("signPublicKey", "c2hvcnQ=", "base64 of 32 bytes");
  refused("signature", nullptr, "must be signed");
  refused("pool", "x", "unknown field \"pool\"");
}

}  // namespace
}  // namespace takosumi::protocol
