// Every boolean option of a source URI (replay:// loop, openni2:// loop and color) takes the words the
// configuration's YAML reader takes (true/false, yes/no, on/off, any case) and 1/0; anything else is a
// ConfigError naming the option, the URI and the allowed words.
#include <gtest/gtest.h>

#include "depthmask/errors.h"
#include "depthmask/live.h"
#include "depthmask/synth.h"
#include "test_support.h"

namespace dm = depthmask;
using dmtest::Contains;

namespace {

struct BoolOption {
  const char* uri;  // scheme://path? before the option
  const char* key;
};

const BoolOption kOptions[] = {{"replay://d?", "loop"}, {"openni2://?", "loop"}, {"openni2://?", "color"}};

}  // namespace

TEST(UriBooleans, EveryBooleanOptionTakesTheYamlWordsInAnyCaseAndOneOrZero) {
  for (const BoolOption& o : kOptions)
    for (const char* v :
         {"1", "0", "true", "false", "yes", "no", "on", "off", "TRUE", "False", "Yes", "NO", "On", "oFF"}) {
      const std::string uri = std::string(o.uri) + o.key + "=" + v;
      EXPECT_NO_THROW(dm::parse_source_uri(uri)) << uri;
      EXPECT_EQ(dm::parse_source_uri(uri).query.at(o.key), v) << uri;
    }
}

TEST(UriBooleans, AnythingElseIsAConfigErrorNamingTheOptionTheUriAndTheWords) {
  for (const BoolOption& o : kOptions)
    for (const char* v : {"", "2", "-1", "y", "n", "t", "maybe", "01", "truee", " on"}) {
      const std::string uri = std::string(o.uri) + o.key + "=" + v;
      const std::string m = dmtest::message_of<dm::ConfigError>([&] { dm::parse_source_uri(uri); });
      EXPECT_TRUE(Contains(m, "source URI '" + uri + "'")) << m;
      EXPECT_TRUE(Contains(m, std::string(o.key) + " '" + v + "' is not a boolean")) << m;
      EXPECT_TRUE(Contains(m, "true/false, yes/no or on/off (any case), or 1/0")) << m;
    }
}

TEST(UriBooleans, ReplayLoopMeansWhatTheWordSays) {
  dmtest::TempDir dir;
  dm::write_synthetic_dataset(dir.path(), 2, 16, 12);
  const auto frames_read = [&](const std::string& loop) {
    auto s = dm::make_live_source(dm::parse_source_uri("replay://" + dir.path().string() + "?fps=0&loop=" + loop),
                                  dm::Config{});
    s->open();
    dm::CapturedFrame f;
    int n = 0;
    while (n < 5 && s->read(f)) ++n;
    return n;
  };
  for (const char* on : {"1", "true", "Yes", "ON"}) EXPECT_EQ(frames_read(on), 5) << on;
  for (const char* off : {"0", "false", "No", "OFF"}) EXPECT_EQ(frames_read(off), 2) << off;
}
