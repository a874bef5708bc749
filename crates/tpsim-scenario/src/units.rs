//! Values with explicit units: `"20ms"`, `"256kbps"`, `"128B"`, `"250m"`, `"-82dBm"`.
//!
//! A bare number is refused with a "missing unit" error so that nobody wonders whether
//! `delay = 50` meant seconds or milliseconds. Decimal prefixes are powers of 1000 (`kB`,
//! `kbps`); binary ones powers of 1024 (`KiB`). Every unit type is made by one macro from a
//! [`Family`]: its names, conversions to the stored unit, and whether negative values exist.

use schemars::gen::SchemaGenerator;
use schemars::schema::{InstanceType, Schema, SchemaObject, StringValidation};
use schemars::JsonSchema;
use serde::de::{self, Deserializer, Visitor};
use serde::{Serialize, Serializer};
use std::fmt;

/// A unit's conversion of a number in that unit to the stored unit.
pub type Conversion = fn(f64) -> f64;

/// A family of units for one quantity.
pub struct Family {
    /// What the value is, for messages ("a duration").
    pub what: &'static str,
    /// An example value, for messages and the schema.
    pub example: &'static str,
    /// Unit names and their conversion to the stored unit.
    pub units: &'static [(&'static str, Conversion)],
    /// Whether a negative number is meaningful with this unit.
    pub negative_ok: fn(&str) -> bool,
}

/// Splits `"3.652e-10W"` into (3.652e-10, "W"): the longest prefix that parses as a number.
fn split_float(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let i = float_prefix_len(s)?;
    s[..i].parse::<f64>().ok().map(|v| (v, s[i..].trim()))
}

/// The length of the longest prefix of `s` in the grammar of `f64::from_str` (sign, then
/// `inf`, `infinity`, `nan` in any case, or digits with an optional point and exponent), found
/// in one pass: trying every prefix with `parse` took time quadratic in the length of a value.
fn float_prefix_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let digits = |from: usize| b[from.min(b.len())..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    for word in ["infinity", "inf", "nan"] {
        if b.len() >= i + word.len() && b[i..i + word.len()].eq_ignore_ascii_case(word.as_bytes()) {
            return Some(i + word.len());
        }
    }
    let whole = digits(i);
    i += whole;
    let mut end = (whole > 0).then_some(i);
    if b.get(i) == Some(&b'.') {
        let frac = digits(i + 1);
        if whole + frac > 0 {
            end = Some(i + 1 + frac);
        }
    }
    let e = end?;
    if matches!(b.get(e), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(e + 1), Some(b'+' | b'-')));
        let exp = digits(e + 1 + sign);
        if exp > 0 {
            return Some(e + 1 + sign + exp);
        }
    }
    Some(e)
}

impl Family {
    /// Parses `s` into the stored unit.
    ///
    /// # Errors
    /// A message naming what was expected, for a missing, unknown or negative value.
    pub fn parse(&self, s: &str) -> Result<f64, String> {
        let (what, example) = (self.what, self.example);
        let names: Vec<&str> = self.units.iter().map(|(n, _)| *n).collect();
        let names = names.join(", ");
        let Some((v, unit)) = split_float(s) else {
            return Err(format!(
                "expected {what} with a unit, e.g. \"{example}\" (units: {names}), found \"{s}\""
            ));
        };
        if unit.is_empty() {
            return Err(format!(
                "missing unit in \"{s}\": write {what} with a unit, e.g. \"{example}\" (units: {names})"
            ));
        }
        let Some((_, conv)) = self.units.iter().find(|(n, _)| *n == unit) else {
            return Err(format!(
                "unknown unit \"{unit}\" for {what} in \"{s}\" (units: {names})"
            ));
        };
        if !v.is_finite() {
            return Err(format!("{what} \"{s}\" is not a finite number"));
        }
        if v < 0.0 && !(self.negative_ok)(unit) {
            return Err(format!("{what} \"{s}\" must not be negative"));
        }
        Ok(conv(v))
    }
}

/// Rounds to a whole `u64` of the stored unit.
fn to_u64(what: &str, s: &str, v: f64) -> Result<u64, String> {
    let r = v.round();
    if r > u64::MAX as f64 {
        return Err(format!("{what} \"{s}\" is too large"));
    }
    Ok(r as u64)
}

fn keep(_: &str, _: &str, v: f64) -> Result<f64, String> {
    Ok(v)
}

macro_rules! unit {
    ($name:ident, $inner:ty, $family:expr, $pattern:literal, $doc:literal, $from:expr, $to_str:expr) => {
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Default)]
        pub struct $name(pub $inner);

        impl $name {
            /// The unit family.
            pub const FAMILY: Family = $family;

            /// Parses a value with its unit.
            ///
            /// # Errors
            /// A message naming what was expected.
            pub fn parse(s: &str) -> Result<Self, String> {
                let v = Self::FAMILY.parse(s)?;
                let from: fn(&str, &str, f64) -> Result<$inner, String> = $from;
                from(Self::FAMILY.what, s, v).map($name)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        let fam = $name::FAMILY;
                        write!(
                            f,
                            "{} as a string with a unit, e.g. \"{}\"",
                            fam.what, fam.example
                        )
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $name::parse(s).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        self.visit_f64(v as f64)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_f64(v as f64)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        let fam = $name::FAMILY;
                        Err(E::custom(format!(
                            "missing unit in {v}: write {} as a string with a unit, e.g. \"{}\"",
                            fam.what, fam.example
                        )))
                    }
                }
                d.deserialize_any(V)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let g: fn(&$name) -> String = $to_str;
                f.write_str(&g(self))
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> String {
                stringify!($name).to_string()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                let mut o = SchemaObject {
                    instance_type: Some(InstanceType::String.into()),
                    string: Some(Box::new(StringValidation {
                        pattern: Some($pattern.to_string()),
                        ..Default::default()
                    })),
                    ..Default::default()
                };
                o.metadata().description = Some(format!("{} Example: \"{}\".", $doc, $name::FAMILY.example));
                Schema::Object(o)
            }
        }
    };
}

unit!(
    Duration,
    u64,
    Family {
        what: "a duration",
        example: "20ms",
        units: &[
            ("ns", |v| v),
            ("us", |v| v * 1e3),
            ("µs", |v| v * 1e3),
            ("ms", |v| v * 1e6),
            ("s", |v| v * 1e9),
            ("min", |v| v * 60e9),
            ("h", |v| v * 3600e9)
        ],
        negative_ok: |_| false,
    },
    r"^\s*[-+0-9.eE]+\s*(ns|us|µs|ms|s|min|h)\s*$",
    "A duration; stored as nanoseconds.",
    to_u64,
    |d: &Duration| format!("{}ns", d.0)
);
unit!(
    Rate,
    u64,
    Family {
        what: "a bit rate",
        example: "256kbps",
        units: &[
            ("bps", |v| v),
            ("bit/s", |v| v),
            ("kbps", |v| v * 1e3),
            ("kbit/s", |v| v * 1e3),
            ("Mbps", |v| v * 1e6),
            ("Mbit/s", |v| v * 1e6),
            ("Gbps", |v| v * 1e9),
            ("Gbit/s", |v| v * 1e9)
        ],
        negative_ok: |_| false,
    },
    r"^\s*[-+0-9.eE]+\s*(bps|bit/s|kbps|kbit/s|Mbps|Mbit/s|Gbps|Gbit/s)\s*$",
    "A bit rate; stored as bit/s.",
    to_u64,
    |r: &Rate| format!("{}bps", r.0)
);
unit!(
    Bytes,
    u64,
    Family {
        what: "a size",
        example: "128B",
        units: &[
            ("B", |v| v),
            ("kB", |v| v * 1e3),
            ("KB", |v| v * 1e3),
            ("MB", |v| v * 1e6),
            ("GB", |v| v * 1e9),
            ("TB", |v| v * 1e12),
            ("KiB", |v| v * 1024.0),
            ("MiB", |v| v * 1048576.0),
            ("GiB", |v| v * 1073741824.0),
            ("TiB", |v| v * 1099511627776.0)
        ],
        negative_ok: |_| false,
    },
    r"^\s*[-+0-9.eE]+\s*(B|kB|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$",
    "A size; stored as bytes.",
    to_u64,
    |b: &Bytes| format!("{}B", b.0)
);
unit!(
    Meters,
    f64,
    Family { what: "a distance", example: "250m", units: &[("m", |v| v), ("km", |v| v * 1e3)], negative_ok: |_| true },
    r"^\s*[-+0-9.eE]+\s*(m|km)\s*$",
    "A distance or coordinate; stored as metres (negative values are coordinates left of or below the origin; keys that are lengths check that they are positive).",
    keep,
    |m: &Meters| format!("{:e}m", m.0)
);
unit!(
    Watts,
    f64,
    Family {
        what: "a power",
        example: "0.28183815W",
        units: &[
            ("W", |v| v),
            ("mW", |v| v * 1e-3),
            ("uW", |v| v * 1e-6),
            ("nW", |v| v * 1e-9),
            ("pW", |v| v * 1e-12),
            ("dBm", |v| libm::pow(10.0, v / 10.0) * 1e-3)
        ],
        negative_ok: |u| u == "dBm",
    },
    r"^\s*[-+0-9.eE]+\s*(W|mW|uW|nW|pW|dBm)\s*$",
    "A power; stored as watts. dBm values are converted: P(W) = 10^(dBm/10) / 1000.",
    keep,
    |w: &Watts| format!("{:e}W", w.0)
);
unit!(
    Hertz,
    f64,
    Family {
        what: "a frequency",
        example: "914MHz",
        units: &[
            ("Hz", |v| v),
            ("kHz", |v| v * 1e3),
            ("MHz", |v| v * 1e6),
            ("GHz", |v| v * 1e9)
        ],
        negative_ok: |_| false,
    },
    r"^\s*[-+0-9.eE]+\s*(Hz|kHz|MHz|GHz)\s*$",
    "A frequency; stored as hertz.",
    keep,
    |h: &Hertz| format!("{:e}Hz", h.0)
);

unit!(
    Speed,
    f64,
    Family {
        what: "a speed",
        example: "20m/s",
        units: &[("m/s", |v| v), ("km/h", |v| v / 3.6)],
        negative_ok: |_| true,
    },
    r"^\s*[-+0-9.eE]+\s*(m/s|km/h)\s*$",
    "A speed or velocity component; stored as m/s (negative values are velocity components; keys that are speeds check that they are not negative).",
    keep,
    |v: &Speed| format!("{:e}m/s", v.0)
);
unit!(
    Joules,
    f64,
    Family {
        what: "an energy",
        example: "10J",
        units: &[
            ("J", |v| v),
            ("mJ", |v| v * 1e-3),
            ("kJ", |v| v * 1e3),
            ("Wh", |v| v * 3600.0)
        ],
        negative_ok: |_| false,
    },
    r"^\s*[-+0-9.eE]+\s*(J|mJ|kJ|Wh)\s*$",
    "An energy; stored as joules.",
    keep,
    |e: &Joules| format!("{:e}J", e.0)
);
unit!(
    Angle,
    f64,
    Family {
        what: "an angle",
        example: "90deg",
        units: &[("deg", |v| v.to_radians()), ("rad", |v| v)],
        negative_ok: |_| false,
    },
    r"^\s*[-+0-9.eE]+\s*(deg|rad)\s*$",
    "An angle; stored as radians.",
    keep,
    |a: &Angle| format!("{:e}rad", a.0)
);

impl Duration {
    /// The duration as simulation time.
    pub fn sim(self) -> tpsim_core::SimDuration {
        tpsim_core::SimDuration(self.0)
    }
    /// Seconds, for reporting.
    pub fn secs(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// Seconds with a unit for messages, without floating-point noise ("30s", not
    /// "30.000000000000004s": division by a power of ten rounds correctly).
    pub fn human(self) -> String {
        format!("{}s", self.0 as f64 / 1e9)
    }
}

/// Every unit family of the scenario format, as (name, SI unit, family): the one table of
/// units that the Python package reads through the binding (`unit_families`).
pub const FAMILIES: [(&str, &str, &Family); 9] = [
    ("duration", "s", &Duration::FAMILY),
    ("rate", "bps", &Rate::FAMILY),
    ("size", "B", &Bytes::FAMILY),
    ("distance", "m", &Meters::FAMILY),
    ("power", "W", &Watts::FAMILY),
    ("frequency", "Hz", &Hertz::FAMILY),
    ("speed", "m/s", &Speed::FAMILY),
    ("energy", "J", &Joules::FAMILY),
    ("angle", "rad", &Angle::FAMILY),
];

impl Family {
    /// The units that scale linearly (all but dBm), as (unit, factor) with `factor` the value
    /// in unit `si` of 1 of the unit: `("ms", 1e-3)` for durations in `"s"`.
    pub fn linear_units(&self, si: &str) -> Vec<(&'static str, f64)> {
        let scale = self.units.iter().find(|(u, _)| *u == si).map_or(1.0, |(_, to)| to(1.0));
        self.units
            .iter()
            .filter(|(_, to)| to(0.0) == 0.0 && (to(2.0) - 2.0 * to(1.0)).abs() <= 1e-12 * to(1.0).abs())
            .map(|(u, to)| (*u, to(1.0) / scale))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(Duration::parse("20ms").unwrap().0, 20_000_000);
        assert_eq!(Duration::parse("1.5s").unwrap().0, 1_500_000_000);
        assert_eq!(Duration::parse("0.1s").unwrap().0, 100_000_000);
        assert_eq!(Duration::parse("2min").unwrap().0, 120_000_000_000);
        assert_eq!(Rate::parse("256kbps").unwrap().0, 256_000);
        assert_eq!(Rate::parse("0.01Mbps").unwrap().0, 10_000);
        assert_eq!(Rate::parse("11 Mbit/s").unwrap().0, 11_000_000);
        assert_eq!(Bytes::parse("128B").unwrap().0, 128);
        assert_eq!(Bytes::parse("64KiB").unwrap().0, 65536);
    }

    #[test]
    fn refuses_missing_unknown_and_negative() {
        assert!(Duration::parse("20").unwrap_err().contains("missing unit"));
        assert!(Duration::parse("20 parsecs").unwrap_err().contains("unknown unit"));
        assert!(Rate::parse("-5kbps").unwrap_err().contains("negative"));
        assert!(Bytes::parse("abc").unwrap_err().contains("expected a size"));
    }

    #[test]
    fn parses_float_units() {
        assert_eq!(Watts::parse("3.652e-10W").unwrap().0, 3.652e-10);
        assert!((Watts::parse("-64.37dBm").unwrap().0 - 3.6559e-10).abs() < 1e-13);
        assert!((Watts::parse("24.5dBm").unwrap().0 - 0.2818).abs() < 1e-4);
        assert_eq!(Meters::parse("1.5m").unwrap().0, 1.5);
        assert_eq!(Meters::parse("2km").unwrap().0, 2000.0);
        assert_eq!(Hertz::parse("914MHz").unwrap().0, 914e6);
        assert!(Watts::parse("-1W").unwrap_err().contains("negative"));
        assert_eq!(Meters::parse("-5m").unwrap().0, -5.0);
        assert!(Meters::parse("250").unwrap_err().contains("missing unit"));
        assert!(Hertz::parse("5 parsecs").unwrap_err().contains("unknown unit"));
    }

    #[test]
    fn canonical_strings_round_trip() {
        assert_eq!(Duration::parse(&Duration(1234).to_string()).unwrap(), Duration(1234));
        assert_eq!(Rate::parse(&Rate(256_000).to_string()).unwrap(), Rate(256_000));
        assert_eq!(Watts::parse(&Watts(3.652e-10).to_string()).unwrap(), Watts(3.652e-10));
        assert_eq!(Meters::parse(&Meters(-12.5).to_string()).unwrap(), Meters(-12.5));
        assert_eq!(
            Meters::parse(&Meters(250.159448320886).to_string()).unwrap(),
            Meters(250.159448320886)
        );
        assert_eq!(
            Speed::parse(&Speed(19.153832288917).to_string()).unwrap(),
            Speed(19.153832288917)
        );
        assert_eq!(Joules::parse(&Joules(0.1).to_string()).unwrap(), Joules(0.1));
        assert_eq!(Angle::parse(&Angle(1.25).to_string()).unwrap(), Angle(1.25));
    }

    /// The one-pass prefix is the longest prefix that `parse` accepts.
    #[test]
    fn float_prefix_is_the_longest_parsing_prefix() {
        let slow = |s: &str| {
            (1..=s.len())
                .filter(|&i| s.is_char_boundary(i) && s[..i].parse::<f64>().is_ok())
                .max()
        };
        for s in [
            "20ms",
            "1e5ns",
            "1.5min",
            "-64.37dBm",
            "3.652e-10W",
            "1.e5s",
            "1.s",
            ".5s",
            ".e5",
            ".",
            "1e",
            "1e+",
            "1e+5",
            "1E-5x",
            "+inf",
            "-Infinity",
            "infinit",
            "INFs",
            "nan",
            "+NaNm",
            "++1",
            "-",
            "",
            "e5",
            "0x10",
            "1_000",
            "00012.50e007km",
            "5 parsecs",
            "µs",
            "1µs",
        ] {
            assert_eq!(float_prefix_len(s).filter(|&i| i > 0), slow(s), "{s:?}");
        }
        // Linear: a long value is refused at once.
        let long = "1".repeat(1_000_000) + &"e+".repeat(1_000_000);
        assert!(Duration::parse(&long).is_err());
    }

    proptest::proptest! {
        /// Same as the longest prefix that `parse` accepts, on strings of number characters.
        #[test]
        fn float_prefix_matches_parse(s in "[-+.0-9eEinfatyINFATY_x µs]{0,14}") {
            let slow = (1..=s.len()).filter(|&i| s.is_char_boundary(i) && s[..i].parse::<f64>().is_ok()).max();
            proptest::prop_assert_eq!(float_prefix_len(&s), slow);
        }
    }

    #[test]
    fn parses_speed_energy_angle() {
        assert_eq!(Speed::parse("20m/s").unwrap().0, 20.0);
        assert!((Speed::parse("36km/h").unwrap().0 - 10.0).abs() < 1e-12);
        assert_eq!(Joules::parse("2kJ").unwrap().0, 2000.0);
        assert!(Joules::parse("-1J").unwrap_err().contains("negative"));
        assert!((Angle::parse("180deg").unwrap().0 - std::f64::consts::PI).abs() < 1e-15);
        assert!(Speed::parse("5").unwrap_err().contains("missing unit"));
    }

    #[test]
    fn families_give_linear_factors_in_their_si_unit() {
        let get = |fam: &str, unit: &str| {
            let (_, si, f) = FAMILIES.iter().find(|(n, _, _)| *n == fam).unwrap();
            f.linear_units(si).into_iter().find(|(u, _)| *u == unit).map(|(_, k)| k)
        };
        assert_eq!(get("duration", "ms"), Some(1e-3));
        assert_eq!(get("duration", "h"), Some(3600.0));
        assert_eq!(get("size", "TiB"), Some(1099511627776.0));
        assert_eq!(get("power", "mW"), Some(1e-3));
        assert_eq!(get("power", "dBm"), None);
        assert!((get("speed", "km/h").unwrap() - 1.0 / 3.6).abs() < 1e-15);
        assert!((get("angle", "deg").unwrap() - std::f64::consts::PI / 180.0).abs() < 1e-15);
        assert_eq!(Bytes::parse("2TB").unwrap().0, 2_000_000_000_000);
    }
}
