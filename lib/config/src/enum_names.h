// Every enum of the configuration as one {value, name} array: the YAML word of each value. to_string,
// the parse_* functions (enums.cpp) and the "allowed values" of messages all read these arrays,
// through the templates of depthmask/detail/enum_names.h.
#pragma once

#include <string_view>

#include "depthmask/config.h"
#include "depthmask/detail/enum_names.h"

namespace depthmask::detail {

inline constexpr EnumName<BackendKind> kBackendKinds[] = {{BackendKind::Auto, "auto"},
                                                          {BackendKind::Copy, "copy"},
                                                          {BackendKind::ZeroCopy, "zero_copy"},
                                                          {BackendKind::Managed, "managed"},
                                                          {BackendKind::Cpu, "cpu"}};
inline constexpr EnumName<OnError> kOnErrors[] = {{OnError::Skip, "skip"}, {OnError::Stop, "stop"}};
inline constexpr EnumName<OutputFormat> kOutputFormats[] = {
    {OutputFormat::Tiff, "tiff"},     {OutputFormat::Npy, "npy"},  {OutputFormat::Exr, "exr"},
    {OutputFormat::Png16, "png16"},   {OutputFormat::Ply, "ply"},  {OutputFormat::Json, "json"},
    {OutputFormat::Reason, "reason"}, {OutputFormat::Mcap, "mcap"}};
inline constexpr EnumName<InputLayout> kInputLayouts[] = {
    {InputLayout::Auto, "auto"},           {InputLayout::Pattern, "pattern"}, {InputLayout::Apc, "apc"},
    {InputLayout::SevenScenes, "7scenes"}, {InputLayout::Bop, "bop"},         {InputLayout::Tum, "tum"},
    {InputLayout::YcbInEOAT, "ycbineoat"}, {InputLayout::Rosbag2, "rosbag2"}};
inline constexpr EnumName<DepthEncoding> kDepthEncodings[] = {{DepthEncoding::Plain, "plain"},
                                                              {DepthEncoding::Apc, "apc"}};
inline constexpr EnumName<RegistrationMode> kRegistrationModes[] = {{RegistrationMode::Auto, "auto"},
                                                                    {RegistrationMode::None, "none"},
                                                                    {RegistrationMode::Resample, "resample"},
                                                                    {RegistrationMode::Reproject, "reproject"}};
inline constexpr EnumName<DistortionModel> kDistortionModels[] = {
    {DistortionModel::None, "none"}, {DistortionModel::InverseBrownConrady, "inverse_brown_conrady"}};
inline constexpr EnumName<OutputLayout> kOutputLayouts[] = {{OutputLayout::Flat, "flat"},
                                                            {OutputLayout::Mirror, "mirror"}};
inline constexpr EnumName<Overflow> kOverflows[] = {
    {Overflow::Auto, "auto"}, {Overflow::DropOldest, "drop_oldest"}, {Overflow::Block, "block"}};

// Named depth scales (metres per raw unit), the words depth.scale takes besides a number.
struct ScalePreset {
  std::string_view name;
  double metres_per_unit;
};
inline constexpr ScalePreset kDepthScalePresets[] = {
    {"mm", 0.001}, {"0.1mm", 0.0001}, {"tum", 1.0 / 5000.0}, {"d405", 0.0001}};

}  // namespace depthmask::detail
