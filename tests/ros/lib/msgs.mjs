// The ROS 2 message types the bags carry, as the ros2msg text `ros2 bag record` stores in an MCAP
// Schema record (the type's own fields, then each dependency after a line of 80 '=' and
// "MSG: pkg/Type"), parsed by Foxglove's @foxglove/rosmsg and serialised by
// @foxglove/rosmsg2-serialization. Written here from sensor_msgs' .msg files (Humble).
import { parse } from "@foxglove/rosmsg";
import { MessageReader, MessageWriter } from "@foxglove/rosmsg2-serialization";

const SEP = "=".repeat(80);

const TIME = `int32 sec
uint32 nanosec
`;
const HEADER = `builtin_interfaces/Time stamp
string frame_id
`;
const ROI = `uint32 x_offset
uint32 y_offset
uint32 height
uint32 width
bool do_rectify
`;

function withDeps(own, deps) {
  return own + deps.map(([name, text]) => `${SEP}\nMSG: ${name}\n${text}`).join("");
}

const headerDeps = [
  ["std_msgs/Header", HEADER],
  ["builtin_interfaces/Time", TIME],
];

/** ros2msg text of each type, keyed by its ROS 2 name. */
export const SCHEMAS = {
  "sensor_msgs/msg/Image": withDeps(
    `std_msgs/Header header
uint32 height
uint32 width
string encoding
uint8 is_bigendian
uint32 step
uint8[] data
`,
    headerDeps,
  ),
  "sensor_msgs/msg/CompressedImage": withDeps(
    `std_msgs/Header header
string format
uint8[] data
`,
    headerDeps,
  ),
  "sensor_msgs/msg/CameraInfo": withDeps(
    `std_msgs/Header header
uint32 height
uint32 width
string distortion_model
float64[] d
float64[9] k
float64[9] r
float64[12] p
uint32 binning_x
uint32 binning_y
sensor_msgs/RegionOfInterest roi
`,
    [...headerDeps, ["sensor_msgs/RegionOfInterest", ROI]],
  ),
};

/** The top-level fields each known type must have, in order: a schema that is not the type it claims
 * (its name says Image, its fields say otherwise) fails read_bag. */
export const FIELDS = {
  "sensor_msgs/msg/Image": ["header", "height", "width", "encoding", "is_bigendian", "step", "data"],
  "sensor_msgs/msg/CompressedImage": ["header", "format", "data"],
  "sensor_msgs/msg/CameraInfo": [
    "header", "height", "width", "distortion_model", "d", "k", "r", "p", "binning_x", "binning_y", "roi",
  ],
};

/** rosbag2's offered_qos_profiles for a reliable, volatile, keep-last publisher as Humble records it
 * (history 3 = unknown, reliability 1 = reliable, durability 2 = volatile; infinite durations). */
export const DEFAULT_QOS = `- history: 3
  depth: 0
  reliability: 1
  durability: 2
  deadline:
    sec: 9223372036
    nsec: 854775807
  lifespan:
    sec: 9223372036
    nsec: 854775807
  liveliness: 1
  liveliness_lease_duration:
    sec: 9223372036
    nsec: 854775807
  avoid_ros_namespace_conventions: false`;

export function parseSchema(text) {
  return parse(text, { ros2: true });
}

const writers = new Map();
/** CDR (little-endian, as rclcpp publishes) of `msg` as `type`. */
export function serialize(type, msg) {
  if (!writers.has(type)) writers.set(type, new MessageWriter(parseSchema(SCHEMAS[type])));
  return writers.get(type).writeMessage(msg);
}

export function readerFor(schemaText) {
  const defs = parseSchema(schemaText);
  return { defs, reader: new MessageReader(defs) };
}

/** A header.stamp from nanoseconds (BigInt). */
export function stampOf(ns) {
  return { sec: Number(ns / 1000000000n), nanosec: Number(ns % 1000000000n) };
}

export function nsOf(stamp) {
  return BigInt(stamp.sec) * 1000000000n + BigInt(stamp.nanosec);
}
