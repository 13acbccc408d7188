// Internal: a CycloneDDS sertype whose samples are CDR payloads made and read by depthmask's own codec
// (lib/ros: cdr.h, ros_msgs.h), so CycloneDDS never (de)serialises a ROS message itself. A sample is
// a shared, immutable byte buffer (the 4-byte encapsulation header, then the message): a serdata
// holds a reference to it, so a write hands the bytes to every local reader and to the transmit path
// (to_ser_ref) without copying them; received fragments are joined into one buffer once.
#pragma once

#include <dds/dds.h>

#include <string>

#include "depthmask/detail/dds.h"

namespace depthmask::detail {

/// What dds_write takes for a raw-CDR topic.
struct RawCdrSample {
  CdrBytes bytes;
};

/// A new sertype (reference count 1, owned by the topic dds_create_topic_sertype makes) for the DDS
/// type name `dds_type` ("sensor_msgs::msg::dds_::Image_"); keyless, XCDR1 as ROS 2 writes.
ddsi_sertype* make_raw_cdr_sertype(const std::string& dds_type);

/// The payload a serdata of that sertype carries (from dds_takecdr); null for another sertype's.
CdrBytes raw_cdr_bytes(const ddsi_serdata* d);

}  // namespace depthmask::detail
