#include "runner/tofu/exec_denial.hpp"

#include <gtest/gtest.h>

namespace takosumi::runner {
namespace {

TEST(ExecDenial, TheShellsAndGosWordsNameTheProgram) {
  EXPECT_EQ(denied_program("Error running command './run.sh': exit status 126. Output: /bin/sh: 1: "
                           "./run.sh: Permission denied"),
            "./run.sh");
  EXPECT_EQ(denied_program("bash: line 1: ./tools/x: Permission denied"), "./tools/x");
  EXPECT_EQ(denied_program("/bin/bash: /tmp/y: Permission denied"), "/tmp/y");
  EXPECT_EQ(denied_program("failed to execute \"./x.py\": fork/exec ./x.py: permission denied"),
            "./x.py");
}

TEST(ExecDenial, AReadOrWriteRefusedIsNotAnExec) {
  EXPECT_FALSE(denied_program("Error: open /etc/shadow: permission denied"));
  EXPECT_FALSE(denied_program("Error: mkdir /srv/out: permission denied"));
  EXPECT_FALSE(denied_program("touch: cannot touch '/x': Permission denied"));
  EXPECT_FALSE(denied_program("Permission denied"));
  EXPECT_FALSE(denied_program("Apply complete! Resources: 1 added"));
  EXPECT_FALSE(denied_program("Error: refresh: /x: Permission denied"));
  EXPECT_FALSE(denied_program("fork/exec widen sandbox.execAllow now: permission denied"));
  EXPECT_FALSE(denied_program("/bin/sh: 1: \"quoted\": Permission denied"));
}

TEST(ExecDenial, TheMessageSaysWhatTheAuthorAndTheOperatorCanDo) {
  const std::string message = exec_denial_message("./run.sh");
  EXPECT_NE(message.find("\"./run.sh\""), std::string::npos);
  EXPECT_NE(message.find("files of the checkout"), std::string::npos);
  EXPECT_NE(message.find("interpreter"), std::string::npos);
  EXPECT_NE(message.find("sandbox.execAllow"), std::string::npos);
}

}  // namespace
}  // namespace takosumi::runner
