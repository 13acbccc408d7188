#include "sqlite_storage.h"

#include "compression.h"
#include "depthmask/errors.h"

#if defined(DEPTHMASK_WITH_ROSBAG) && DEPTHMASK_WITH_ROSBAG
#include <sqlite3.h>

#include <mutex>
#include <set>
#endif

namespace depthmask::detail {

#if defined(DEPTHMASK_WITH_ROSBAG) && DEPTHMASK_WITH_ROSBAG

namespace {

struct Statement {
  sqlite3_stmt* s = nullptr;
  ~Statement() { sqlite3_finalize(s); }
};

std::string text_of(sqlite3_stmt* s, int col) {
  const unsigned char* t = sqlite3_column_text(s, col);
  return t ? std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(s, col))) : "";
}

}  // namespace

struct SqliteStorage::Impl {
  std::filesystem::path file;
  sqlite3* db = nullptr;
  std::vector<SqliteTopic> topics;
  mutable std::mutex mu;  // read() from several threads: one statement at a time

  ~Impl() { sqlite3_close(db); }

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError("SQLite bag file '" + file.string() + "': " + what + ": " +
                     (db ? sqlite3_errmsg(db) : "no database"));
  }

  void prepare(Statement& st, const std::string& sql) const {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK) fail("cannot read it (" + sql + ")");
  }

  std::set<std::string> columns(const std::string& table) const {
    Statement st;
    prepare(st, "PRAGMA table_info(" + table + ")");
    std::set<std::string> cols;
    while (sqlite3_step(st.s) == SQLITE_ROW) cols.insert(text_of(st.s, 1));
    return cols;
  }
};

SqliteStorage::SqliteStorage(const std::filesystem::path& file) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.file = file;
  if (!std::filesystem::is_regular_file(file)) throw InputError("SQLite bag file '" + file.string() + "' is missing");
  if (sqlite3_open_v2(file.c_str(), &m.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK) {
    m.fail("cannot open it");
  }
  const std::set<std::string> cols = m.columns("topics");
  for (const char* need : {"id", "name", "type", "serialization_format"}) {
    if (!cols.count(need))
      m.fail(std::string("it has no topics table with a column '") + need + "' (not a rosbag2 bag?)");
  }
  const std::set<std::string> msg_cols = m.columns("messages");
  for (const char* need : {"id", "topic_id", "timestamp", "data"}) {
    if (!msg_cols.count(need)) m.fail(std::string("it has no messages table with a column '") + need + "'");
  }
  const bool qos = cols.count("offered_qos_profiles") > 0;  // older bags (Eloquent) lack it
  Statement st;
  m.prepare(st, std::string("SELECT id, name, type, serialization_format") + (qos ? ", offered_qos_profiles" : "") +
                    " FROM topics ORDER BY id");
  int rc = 0;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    SqliteTopic t;
    t.id = sqlite3_column_int64(st.s, 0);
    t.name = text_of(st.s, 1);
    t.type = text_of(st.s, 2);
    t.serialization_format = text_of(st.s, 3);
    if (qos) t.offered_qos_profiles = text_of(st.s, 4);
    m.topics.push_back(std::move(t));
  }
  if (rc != SQLITE_DONE) m.fail("reading its topics failed");
}

SqliteStorage::~SqliteStorage() = default;

const std::vector<SqliteTopic>& SqliteStorage::topics() const { return impl_->topics; }

void SqliteStorage::scan(const std::function<bool(int64_t, int64_t, int64_t, const uint8_t*, size_t)>& visit) {
  Impl& m = *impl_;
  Statement st;
  m.prepare(st, "SELECT id, topic_id, timestamp, data FROM messages ORDER BY timestamp, id");
  int rc = 0;
  int64_t last = 0;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    last = sqlite3_column_int64(st.s, 0);
    const void* data = sqlite3_column_blob(st.s, 3);
    const auto n = static_cast<size_t>(sqlite3_column_bytes(st.s, 3));
    if (!visit(last, sqlite3_column_int64(st.s, 1), sqlite3_column_int64(st.s, 2), static_cast<const uint8_t*>(data),
               n)) {
      return;
    }
  }
  if (rc != SQLITE_DONE) m.fail("reading its messages failed after row " + std::to_string(last));
}

std::vector<uint8_t> SqliteStorage::read(int64_t row) const {
  const Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  Statement st;
  m.prepare(st, "SELECT data FROM messages WHERE id = ?");
  sqlite3_bind_int64(st.s, 1, row);
  if (sqlite3_step(st.s) != SQLITE_ROW) m.fail("it has no message of row " + std::to_string(row));
  const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(st.s, 0));
  return std::vector<uint8_t>(p, p + sqlite3_column_bytes(st.s, 0));
}

#else  // built without libsqlite3

struct SqliteStorage::Impl {};
SqliteStorage::SqliteStorage(const std::filesystem::path&) { throw InputError(kNoRosbag); }
SqliteStorage::~SqliteStorage() = default;
const std::vector<SqliteTopic>& SqliteStorage::topics() const {
  static const std::vector<SqliteTopic> none;
  return none;
}
void SqliteStorage::scan(const std::function<bool(int64_t, int64_t, int64_t, const uint8_t*, size_t)>&) {}
std::vector<uint8_t> SqliteStorage::read(int64_t) const { return {}; }

#endif

}  // namespace depthmask::detail
