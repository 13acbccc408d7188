// The ros2msg schemas of the message types depthmask writes, laid out as rosbag2 stores them
// (rosbag2_cpp's LocalMessageDefinitionSource, documented in rosbag2's
// docs/message_definition_encoding.md): the type's .msg text, then each dependency, depth first, in
// the sorted order of the type names its fields use, each once, after "\n", a line of 80 '=' and
// "MSG: <name>" where <name> is spelled as the field spells it ("std_msgs/Header"; a type of the same
// package gets its package: "sensor_msgs/RegionOfInterest"). Foxglove's @foxglove/rosmsg resolves a
// field's type by the suffix of a MSG: name, so the spelling must match the fields' ("std_msgs/msg/Header"
// would not resolve "std_msgs/Header"). The .msg texts are those of ROS 2's common_interfaces and
// rcl_interfaces without their comments.
#include <map>
#include <string>
#include <vector>

#include "depthmask/ros_msgs.h"

namespace depthmask::ros {
namespace {

// Keyed by the name as the fields spell it.
struct MsgText {
  const char* text;
  std::vector<const char*> dependencies;  // sorted, as rosbag2's std::set holds them
};

const std::map<std::string, MsgText>& msg_texts() {
  static const std::map<std::string, MsgText> texts = {
      {"builtin_interfaces/Time", {"int32 sec\nuint32 nanosec\n", {}}},
      {"std_msgs/Header", {"builtin_interfaces/Time stamp\nstring frame_id\n", {"builtin_interfaces/Time"}}},
      {"sensor_msgs/Image",
       {"std_msgs/Header header\n"
        "uint32 height\n"
        "uint32 width\n"
        "string encoding\n"
        "uint8 is_bigendian\n"
        "uint32 step\n"
        "uint8[] data\n",
        {"std_msgs/Header"}}},
      {"sensor_msgs/CompressedImage", {"std_msgs/Header header\nstring format\nuint8[] data\n", {"std_msgs/Header"}}},
      {"sensor_msgs/RegionOfInterest",
       {"uint32 x_offset\nuint32 y_offset\nuint32 height\nuint32 width\nbool do_rectify\n", {}}},
      {"sensor_msgs/CameraInfo",
       {"std_msgs/Header header\n"
        "uint32 height\n"
        "uint32 width\n"
        "string distortion_model\n"
        "float64[] d\n"
        "float64[9] k\n"
        "float64[9] r\n"
        "float64[12] p\n"
        "uint32 binning_x\n"
        "uint32 binning_y\n"
        "RegionOfInterest roi\n",
        {"sensor_msgs/RegionOfInterest", "std_msgs/Header"}}},
      {"sensor_msgs/PointField",
       {"uint8 INT8 = 1\n"
        "uint8 UINT8 = 2\n"
        "uint8 INT16 = 3\n"
        "uint8 UINT16 = 4\n"
        "uint8 INT32 = 5\n"
        "uint8 UINT32 = 6\n"
        "uint8 FLOAT32 = 7\n"
        "uint8 FLOAT64 = 8\n"
        "string name\n"
        "uint32 offset\n"
        "uint8 datatype\n"
        "uint32 count\n",
        {}}},
      {"sensor_msgs/PointCloud2",
       {"std_msgs/Header header\n"
        "uint32 height\n"
        "uint32 width\n"
        "PointField[] fields\n"
        "bool is_bigendian\n"
        "uint32 point_step\n"
        "uint32 row_step\n"
        "uint8[] data\n"
        "bool is_dense\n",
        {"sensor_msgs/PointField", "std_msgs/Header"}}},
  };
  return texts;
}

// rosbag2's get_full_text: the text, then each dependency not yet written, depth first.
void append_definition(const MsgText& msg, std::vector<std::string>& seen, std::string& out) {
  out += msg.text;
  for (const char* dep : msg.dependencies) {
    bool already = false;
    for (const std::string& s : seen) already = already || s == dep;
    if (already) continue;
    seen.emplace_back(dep);
    out += "\n" + std::string(80, '=') + "\nMSG: " + dep + "\n";
    append_definition(msg_texts().at(dep), seen, out);
  }
}

// "sensor_msgs/msg/Image" → "sensor_msgs/Image" (the key of msg_texts()).
std::string short_name(const std::string& type) {
  const std::string infix = "/msg/";
  const size_t at = type.find(infix);
  return at == std::string::npos ? type : type.substr(0, at) + "/" + type.substr(at + infix.size());
}

}  // namespace

const std::string& message_definition(const std::string& type) {
  static const std::map<std::string, std::string> full = [] {
    std::map<std::string, std::string> m;
    for (const char* t : {kImageType, kCompressedImageType, kCameraInfoType, kPointCloud2Type}) {
      std::vector<std::string> seen;
      append_definition(msg_texts().at(short_name(t)), seen, m[t]);
    }
    return m;
  }();
  static const std::string none;
  const auto it = full.find(type);
  return it == full.end() ? none : it->second;
}

}  // namespace depthmask::ros
