// Opaque page cursors: round trip, bound to their list, and refusing anything else.
#include "controlplane/api/page_cursor.hpp"

#include <gtest/gtest.h>

#include "common/error_codes.hpp"

namespace takosumi::controlplane {
namespace {

TEST(PageCursorTest, RoundTripsAndIsUrlSafe) {
  for (std::int64_t position : {0L, 1L, 42L, 9'000'000'000L}) {
    const std::string cursor = encode_cursor("capsule cap_1", position);
    EXPECT_EQ(cursor.find_first_of("+/=&?% "), std::string::npos) << cursor;
    EXPECT_EQ(decode_cursor(cursor, "capsule cap_1").value_or(-1), position);
  }
}

TEST(PageCursorTest, RefusesCursorsOfOtherListsAndGarbage) {
  const std::string cursor = encode_cursor("capsule cap_1", 7);
  for (const std::string& bad : {encode_cursor("capsule cap_2", 7), std::string("7"),
                                 std::string("!!!"), std::string(600, 'A'),
                                 cursor.substr(0, cursor.size() - 2), cursor + "="}) {
    auto decoded = decode_cursor(bad, "capsule cap_1");
    ASSERT_FALSE(decoded) << bad;
    EXPECT_EQ(decoded.error().code, errc::kInvalidArgument);
    EXPECT_NE(decoded.error().message.find("nextCursor"), std::string::npos);
  }
}

}  // namespace
}  // namespace takosumi::controlplane
