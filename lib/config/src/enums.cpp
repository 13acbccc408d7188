// to_string and parse_* of the configuration's enums, from their {value, name} arrays (enum_names.h).
#include "enum_names.h"

namespace depthmask {

using namespace detail;

std::string_view to_string(BackendKind k) { return name_of(kBackendKinds, k); }
std::string_view to_string(OnError e) { return name_of(kOnErrors, e); }
std::string_view to_string(OutputFormat f) { return name_of(kOutputFormats, f); }
std::string_view to_string(InputLayout l) { return name_of(kInputLayouts, l); }
std::string_view to_string(DepthEncoding e) { return name_of(kDepthEncodings, e); }
std::string_view to_string(RegistrationMode m) { return name_of(kRegistrationModes, m); }
std::string_view to_string(DistortionModel m) { return name_of(kDistortionModels, m); }
std::string_view to_string(OutputLayout l) { return name_of(kOutputLayouts, l); }
std::string_view to_string(Overflow o) { return name_of(kOverflows, o); }

std::optional<BackendKind> parse_backend_kind(std::string_view s) { return value_of(kBackendKinds, s); }
std::optional<OnError> parse_on_error(std::string_view s) { return value_of(kOnErrors, s); }
std::optional<OutputFormat> parse_output_format(std::string_view s) { return value_of(kOutputFormats, s); }
std::optional<InputLayout> parse_input_layout(std::string_view s) { return value_of(kInputLayouts, s); }
std::optional<DepthEncoding> parse_depth_encoding(std::string_view s) { return value_of(kDepthEncodings, s); }
std::optional<RegistrationMode> parse_registration_mode(std::string_view s) { return value_of(kRegistrationModes, s); }
std::optional<DistortionModel> parse_distortion_model(std::string_view s) { return value_of(kDistortionModels, s); }
std::optional<OutputLayout> parse_output_layout(std::string_view s) { return value_of(kOutputLayouts, s); }
std::optional<Overflow> parse_overflow(std::string_view s) { return value_of(kOverflows, s); }

std::string allowed_backend_kinds() { return names_list(kBackendKinds); }

std::optional<double> depth_scale_preset(std::string_view name) {
  for (const auto& p : kDepthScalePresets)
    if (p.name == name) return p.metres_per_unit;
  return std::nullopt;
}

}  // namespace depthmask
