#include "src/http/sse.h"

namespace corral::http {

std::string sse_event(std::string_view name, const nlohmann::json& data) {
  std::string out = "event: ";
  out += name;
  out += "\ndata: ";
  out += data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out += "\n\n";
  return out;
}

bool accepts_event_stream(const std::string& accept) {
  return accept.find("text/event-stream") != std::string::npos;
}

}  // namespace corral::http
