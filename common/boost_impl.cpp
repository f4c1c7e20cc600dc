// Debian's Boost 1.81 has no compiled Boost.JSON or Boost.URL library: their sources are
// compiled exactly once, here, and every other target links takosumi_common.
#include <boost/json/src.hpp>
#include <boost/url/src.hpp>
