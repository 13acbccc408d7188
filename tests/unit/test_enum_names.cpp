// The enums' {value, name} arrays (depthmask/detail/enum_names.h): the templates on a small table,
// and every enum of the library that names its values through them: each value's word parses back to
// the value, and the words are the ones logs, reports and messages have always printed.
#include <gtest/gtest.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "depthmask/backend.h"
#include "depthmask/compat.h"
#include "depthmask/config.h"
#include "depthmask/detail/enum_names.h"
#include "depthmask/doctor.h"
#include "depthmask/image_reader.h"
#include "depthmask/intrinsics.h"

namespace dm = depthmask;

namespace {

enum class Fruit { Apple, Pear, Plum };
constexpr dm::detail::EnumName<Fruit> kFruits[] = {{Fruit::Apple, "apple"}, {Fruit::Pear, "pear"}};

// A wider row: the templates read `value` and `name` and leave the other columns alone.
struct FruitRow {
  Fruit value;
  std::string_view name;
  int stones;
};
constexpr FruitRow kFruitRows[] = {{Fruit::Apple, "apple", 0}, {Fruit::Plum, "plum", 1}};

// parse(to_string(v)) == v for every value of an enum with a to_string/parse_* pair.
template <class E, class Parse>
void expect_round_trip(std::initializer_list<E> values, Parse parse) {
  for (const E v : values) {
    const std::string_view word = dm::to_string(v);
    EXPECT_NE(word, "?");
    const std::optional<E> back = parse(word);
    ASSERT_TRUE(back.has_value()) << word;
    EXPECT_EQ(*back, v) << word;
  }
  EXPECT_FALSE(parse("no-such-word").has_value());
  EXPECT_FALSE(parse("").has_value());
}

}  // namespace

TEST(EnumNames, NameAndValueOfATable) {
  using dm::detail::name_of;
  using dm::detail::value_of;
  EXPECT_EQ(name_of(kFruits, Fruit::Pear), "pear");
  EXPECT_EQ(name_of(kFruits, Fruit::Plum), "?") << "a value no row has";
  EXPECT_EQ(name_of(kFruits, Fruit::Plum, "fruit"), "fruit");
  EXPECT_EQ(value_of(kFruits, "apple"), Fruit::Apple);
  EXPECT_FALSE(value_of(kFruits, "Apple").has_value()) << "words compare exactly";
  EXPECT_FALSE(value_of(kFruits, "plum").has_value());
  EXPECT_EQ(dm::detail::names_list(kFruits), "apple, pear");
  static_assert(name_of(kFruits, Fruit::Apple) == "apple", "usable in constant expressions");
}

TEST(EnumNames, WiderRowsGiveTheirOtherColumns) {
  EXPECT_EQ(dm::detail::name_of(kFruitRows, Fruit::Plum), "plum");
  EXPECT_EQ(dm::detail::value_of(kFruitRows, "plum"), Fruit::Plum);
  const FruitRow* plum = dm::detail::row_of(kFruitRows, Fruit::Plum);
  ASSERT_NE(plum, nullptr);
  EXPECT_EQ(plum->stones, 1);
  EXPECT_EQ(dm::detail::row_of(kFruitRows, Fruit::Pear), nullptr);
  EXPECT_EQ(dm::detail::names_list(kFruitRows), "apple, plum");
}

TEST(EnumNames, EveryConfigurationEnumRoundTrips) {
  using dm::BackendKind;
  expect_round_trip(
      {BackendKind::Auto, BackendKind::Copy, BackendKind::ZeroCopy, BackendKind::Managed, BackendKind::Cpu},
      dm::parse_backend_kind);
  expect_round_trip({dm::OnError::Skip, dm::OnError::Stop}, dm::parse_on_error);
  using dm::OutputFormat;
  expect_round_trip({OutputFormat::Tiff, OutputFormat::Npy, OutputFormat::Exr, OutputFormat::Png16, OutputFormat::Ply,
                     OutputFormat::Json, OutputFormat::Reason},
                    dm::parse_output_format);
  using dm::InputLayout;
  expect_round_trip({InputLayout::Auto, InputLayout::Pattern, InputLayout::Apc, InputLayout::SevenScenes,
                     InputLayout::Bop, InputLayout::Tum, InputLayout::YcbInEOAT},
                    dm::parse_input_layout);
  expect_round_trip({dm::DepthEncoding::Plain, dm::DepthEncoding::Apc}, dm::parse_depth_encoding);
  using dm::RegistrationMode;
  expect_round_trip(
      {RegistrationMode::Auto, RegistrationMode::None, RegistrationMode::Resample, RegistrationMode::Reproject},
      dm::parse_registration_mode);
  expect_round_trip({dm::DistortionModel::None, dm::DistortionModel::InverseBrownConrady}, dm::parse_distortion_model);
  expect_round_trip({dm::OutputLayout::Flat, dm::OutputLayout::Mirror}, dm::parse_output_layout);
  expect_round_trip({dm::Overflow::Auto, dm::Overflow::DropOldest, dm::Overflow::Block}, dm::parse_overflow);
  EXPECT_EQ(dm::to_string(InputLayout::SevenScenes), "7scenes");
  EXPECT_EQ(dm::allowed_backend_kinds(), "auto, copy, zero_copy, managed, cpu");
}

TEST(EnumNames, TheLibrarysOtherEnumsKeepTheirWords) {
  EXPECT_EQ(dm::to_string(dm::CompatLevel::Ok), "ok");
  EXPECT_EQ(dm::to_string(dm::CompatLevel::Warn), "warning");
  EXPECT_EQ(dm::to_string(dm::CompatLevel::Fail), "unusable");
  EXPECT_EQ(dm::to_string(dm::DoctorLevel::Info), "info");
  EXPECT_EQ(dm::to_string(dm::DoctorLevel::Error), "error");
  EXPECT_STREQ(dm::to_string(dm::ImageRole::Color), "color");
  EXPECT_STREQ(dm::to_string(static_cast<dm::ImageRole>(99)), "image");
  EXPECT_STREQ(dm::to_string(dm::Decoder::FastPng), "fast-png");
  EXPECT_STREQ(dm::to_string(static_cast<dm::Decoder>(99)), "unknown");
  EXPECT_EQ(dm::to_string(dm::Head::AtDevice), "at_device");
}
