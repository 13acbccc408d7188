// A subscriber for `depthmask live --publish ENDPOINT`: connects, receives N masked frames and prints
// for each its id, size, capture-to-ready latency and how many pixels hold a depth (neither 0, NaN
// nor the invalid value). Needs only ZeroMQ (cppzmq) and a JSON parser, not depthmask.
//
//   depthmask live --source synthetic://?size=640x480&fps=30 --publish tcp://127.0.0.1:5555 &
//   depthmask_live_subscriber tcp://127.0.0.1:5555 10
#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

int receive(int argc, char** argv);

int main(int argc, char** argv) {
  // A bad endpoint or a malformed header is reported, not an abort.
  try {
    return receive(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argc > 1 ? argv[1] : "depthmask_live_subscriber", e.what());
    return 1;
  }
}

int receive(int argc, char** argv) {
  if (argc < 2 || argc > 4 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fprintf(stderr, "usage: %s ENDPOINT [FRAMES=10] [TIMEOUT_S=10]\n", argv[0]);
    return 2;
  }
  const std::string endpoint = argv[1];
  const long frames = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 10;
  const long timeout_s = argc > 3 ? std::strtol(argv[3], nullptr, 10) : 10;
  if (frames <= 0 || timeout_s <= 0) {
    std::fprintf(stderr, "FRAMES and TIMEOUT_S must be positive\n");
    return 2;
  }
  zmq::context_t ctx(1);
  zmq::socket_t sub(ctx, zmq::socket_type::sub);
  sub.set(zmq::sockopt::subscribe, "");
  sub.set(zmq::sockopt::rcvtimeo, static_cast<int>(timeout_s * 1000));
  sub.connect(endpoint);
  std::vector<float> depth;
  for (long i = 0; i < frames; ++i) {
    zmq::message_t header, payload;
    if (!sub.recv(header)) {
      std::fprintf(stderr, "no frame within %ld s from %s\n", timeout_s, endpoint.c_str());
      return 1;
    }
    if (!header.more() || !sub.recv(payload) || payload.more()) {
      std::fprintf(stderr, "malformed message: expected a JSON header and one payload part\n");
      return 1;
    }
    const auto h = nlohmann::json::parse(header.to_string());
    const int w = h.at("width"), ht = h.at("height");
    if (h.at("dtype") != "float32" || payload.size() != static_cast<size_t>(w) * static_cast<size_t>(ht) * 4) {
      std::fprintf(stderr, "payload of %zu bytes does not match %dx%d float32\n", payload.size(), w, ht);
      return 1;
    }
    // "invalid": null means NaN.
    const bool invalid_nan = h.at("invalid").is_null();
    const float invalid = invalid_nan ? NAN : h.at("invalid").get<float>();
    depth.resize(payload.size() / 4);
    std::memcpy(depth.data(), payload.data(), payload.size());
    size_t kept = 0;
    for (const float v : depth)
      if (v != 0.0f && !std::isnan(v) && (invalid_nan || v != invalid)) ++kept;
    std::printf("frame %s seq %llu %dx%d latency %llu us kept %zu\n", h.at("id").get<std::string>().c_str(),
                h.at("sequence").get<unsigned long long>(), w, ht,
                h.at("capture_to_ready_us").get<unsigned long long>(), kept);
  }
  return 0;
}
