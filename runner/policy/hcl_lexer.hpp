#pragma once
// A tokenizer for OpenTofu's native syntax, enough to see the block structure of an untrusted
// module. Where a difference from hclsyntax's scanner could hide code it follows that scanner:
// a quoted string or heredoc is one token whose ${ } and %{ } sequences are skipped with their
// own brace nesting; $${ and %%{ are literal; comments vanish; a heredoc ends at a line that
// holds only its marker, with any surrounding white space, for both << and <<-.
#include <cstddef>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace takosumi::runner {

// Template sequences and brackets nest at most this deep; deeper input is refused.
inline constexpr int kMaxHclNesting = 64;

enum class HclTokenKind {
  identifier,
  string,  // a quoted string, quotes included in text
  heredoc,
  number,
  newline,
  open_brace,
  close_brace,
  open_bracket,
  close_bracket,
  open_paren,
  close_paren,
  equals,  // a single '='
  dot,
  comma,
  colon,
  double_colon,
  question,
  op,  // any other operator: + - * / % == != < > <= >= && || ! => ... ~ & | ^ ; ` '
  eof,
};

struct HclToken {
  HclTokenKind kind = HclTokenKind::eof;
  std::string_view text;  // a view of the source
  int line = 0;
  bool has_template = false;  // a string holding ${ } or %{ } sequences
};

class HclLexer {
 public:
  explicit HclLexer(std::string_view source);

  // Errors are invalid_argument with a message starting "line N: " (unterminated string,
  // comment, template or heredoc; a character HCL does not allow; nesting too deep).
  Result<HclToken> next();

 private:
  Result<HclToken> scan(int depth);
  void skip_blank();
  Status skip_block_comment();
  HclToken take(HclTokenKind kind, std::size_t length);
  HclToken scan_word(HclTokenKind kind);
  HclToken scan_operator();
  Result<HclToken> scan_quoted(int depth);
  Result<HclToken> scan_heredoc(int depth, std::size_t opener_length, std::string_view marker);
  Status skip_template_sequence(int depth);
  std::unexpected<Error> error(int line, std::string_view what) const;

  std::string_view src_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

// The value of a string token without template sequences, with HCL's escapes decoded (quote,
// backslash, n, r, t, uNNNN, UNNNNNNNN, $${ and %%{). Unknown escapes are kept as written.
std::string hcl_unquote(std::string_view quoted);

}  // namespace takosumi::runner
