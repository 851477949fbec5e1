#pragma once
// One HTTP/1.1 POST of a JSON body to one etcd member, its whole answer read under a size cap and
// a deadline per step. The member is not trusted with sizes: a header over 16 KiB or a body over
// `max_body_bytes` (declared or chunked) is Error(format) before it is held. A connection that
// fails, times out or breaks off is Error(network), so the caller tries the next member.

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace loco::etcd {

struct PostAnswer {
  unsigned status = 0;
  std::string body;
};

PostAnswer http_post(const std::string& host, const std::string& port, std::string_view path,
                     const std::string& body, std::chrono::milliseconds io_timeout,
                     std::size_t max_body_bytes);

}  // namespace loco::etcd
