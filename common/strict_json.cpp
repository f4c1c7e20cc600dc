#include "common/strict_json.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/value_stack.hpp>

#include <string>
#include <unordered_set>
#include <vector>

#include "common/error_codes.hpp"

namespace takosumi {
namespace {

namespace json = boost::json;

// json::parser's own handler (value_stack), plus one set of seen keys per open object. Only keys
// are copied, never values, so secret values parsed through here leave no extra copy behind.
class StrictHandler {
 public:
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();

  json::value_stack st;
  std::string problem;  // set when a callback refused the document

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) { return open(true); }
  bool on_object_end(std::size_t n, json::error_code&) {
    st.push_object(n);
    return close();
  }
  bool on_array_begin(json::error_code&) { return open(false); }
  bool on_array_end(std::size_t n, json::error_code&) {
    st.push_array(n);
    return close();
  }
  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    key_.append(s.data(), s.size());
    st.push_chars(s);
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code& ec);
  bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_string(json::string_view s, std::size_t, json::error_code&) {
    st.push_string(s);
    return true;
  }
  bool on_number_part(json::string_view, json::error_code&) { return true; }
  bool on_int64(std::int64_t i, json::string_view, json::error_code&) {
    st.push_int64(i);
    return true;
  }
  bool on_uint64(std::uint64_t u, json::string_view, json::error_code&) {
    st.push_uint64(u);
    return true;
  }
  bool on_double(double d, json::string_view, json::error_code&) {
    st.push_double(d);
    return true;
  }
  bool on_bool(bool b, json::error_code&) {
    st.push_bool(b);
    return true;
  }
  bool on_null(json::error_code&) {
    st.push_null();
    return true;
  }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }

 private:
  struct Frame {
    bool is_object = false;
    std::string name;  // how the path names this container: its key, or "[]" in an array
    std::unordered_set<std::string> keys;
  };

  bool open(bool is_object) {
    std::string name;
    if (!frames_.empty()) name = frames_.back().is_object ? last_key_ : "[]";
    frames_.push_back(Frame{is_object, std::move(name), {}});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return true;
  }
  std::string path() const {
    std::string out;
    for (std::size_t i = 1; i < frames_.size(); ++i) {
      if (!out.empty() && frames_[i].name != "[]") out += '.';
      out += frames_[i].name;
    }
    return out;
  }

  std::vector<Frame> frames_;
  std::string key_;       // the key being assembled from its parts
  std::string last_key_;  // the last complete key, which names the next container opened
};

bool StrictHandler::on_key(json::string_view s, std::size_t, json::error_code& ec) {
  key_.append(s.data(), s.size());
  st.push_key(s);
  last_key_ = std::move(key_);
  key_.clear();
  if (frames_.back().keys.insert(last_key_).second) return true;
  const std::string where = path();
  problem = "duplicate key \"" + last_key_.substr(0, 128) + "\"" + (where.empty() ? "" : " in " + where);
  ec = boost::system::errc::make_error_code(boost::system::errc::invalid_argument);
  return false;
}

}  // namespace

Result<json::value> parse_json_strict(std::string_view text, const json::parse_options& options,
                                      json::storage_ptr sp) {
  json::basic_parser<StrictHandler> parser(options);
  parser.handler().st.reset(std::move(sp));
  json::error_code ec;
  const std::size_t n = parser.write_some(false, text.data(), text.size(), ec);
  if (!parser.handler().problem.empty())
    return fail(errc::kInvalidArgument, std::move(parser.handler().problem));
  if (ec) return fail(errc::kInvalidArgument, "invalid JSON: " + ec.message());
  if (n < text.size())
    return fail(errc::kInvalidArgument, "invalid JSON: extra data after the document");
  return parser.handler().st.release();
}

}  // namespace takosumi
