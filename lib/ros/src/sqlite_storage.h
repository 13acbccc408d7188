// rosbag2's SQLite storage (`.db3`, the default of Humble): its `topics` table (id, name, type,
// serialization_format, offered_qos_profiles where the version has it) and its `messages` table (id,
// topic_id, timestamp, data), read-only through libsqlite3. Internal to the ros room.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace depthmask::detail {

struct SqliteTopic {
  int64_t id = 0;
  std::string name;
  std::string type;
  std::string serialization_format;
  std::string offered_qos_profiles;
};

class SqliteStorage {
 public:
  // Opens `file` read-only and reads its topics; InputError naming the file when it is not a rosbag2
  // database (or in a build without libsqlite3).
  explicit SqliteStorage(const std::filesystem::path& file);
  ~SqliteStorage();
  SqliteStorage(const SqliteStorage&) = delete;
  SqliteStorage& operator=(const SqliteStorage&) = delete;

  const std::vector<SqliteTopic>& topics() const;
  // Every message in the order `ros2 bag play` plays them (timestamp, then row id): visit(row id,
  // topic id, timestamp, data, size) returns false to stop.
  void scan(const std::function<bool(int64_t, int64_t, int64_t, const uint8_t*, size_t)>& visit);
  // One message's data by its row id; safe from several threads.
  std::vector<uint8_t> read(int64_t row) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace depthmask::detail
