#include "runner/tofu/process_voice.hpp"

#include <gtest/gtest.h>

namespace takosumi::runner {
namespace {

TEST(ProcessVoice, ALineThatCouldPassForTheAgentsIsQuotedAndOthersPassAsTheyAre) {
  EXPECT_EQ(in_process_voice("takosumi: the plan as sealed (plan digest sha256:00), which an apply of this Run runs:"),
            "> takosumi: the plan as sealed (plan digest sha256:00), which an apply of this Run runs:");
  EXPECT_EQ(in_process_voice("takosumi-confine: Landlock: refused"), "> takosumi-confine: Landlock: refused");
  EXPECT_EQ(in_process_voice("   takosumi: indented"), ">    takosumi: indented");
  EXPECT_EQ(in_process_voice("> takosumi: already quoted once"), "> > takosumi: already quoted once");
  EXPECT_EQ(in_process_voice("null_resource.probe (local-exec): takosumi: is prefixed by tofu"),
            "null_resource.probe (local-exec): takosumi: is prefixed by tofu");
  EXPECT_EQ(in_process_voice("random_pet.name: Creating..."), "random_pet.name: Creating...");
  EXPECT_EQ(in_process_voice(""), "");
  EXPECT_EQ(in_process_voice(">>>"), ">>>");
}

// What a terminal or the CLI does not show (controls, which the CLI drops; zero-width and
// direction characters) and the agent's other prefix ("[takosumi-agent: …]") cannot hide one.
TEST(ProcessVoice, InvisibleCharactersBracketsAndCaseDoNotHideTheAgentsName) {
  for (const std::string& line :
       {std::string("\x01takosumi: end of the plan as sealed"), std::string("\rtakosumi: x"),
        std::string("\x7ftakosumi: x"), std::string("\xc2\x85takosumi: x"),
        std::string("\xe2\x80\x8btakosumi: x"), std::string("\xe2\x80\xaetakosumi: x"),
        std::string("\xef\xbb\xbftakosumi: x"), std::string("\xe2\x81\xa0takosumi: x"),
        std::string("[takosumi-agent: 12 bytes of output dropped]"), std::string("TAKOSUMI: x"),
        std::string(" \t[\x1b[0mTakosumi: x")})
    EXPECT_EQ(in_process_voice(line), "> " + line) << line;
  EXPECT_EQ(in_process_voice("\xe2\x94\x82 Error: takosumi"), "\xe2\x94\x82 Error: takosumi");
  EXPECT_EQ(in_process_voice("[info] takosumi"), "[info] takosumi");
}

}  // namespace
}  // namespace takosumi::runner
