//! Two-element arrays read strictly: `[a, b]` and nothing else. serde's `[T; 2]` reads the
//! first two elements of a TOML array and ignores the rest, so `nodes = [0, 1, 1]` would be
//! read as `[0, 1]`; the fields of that type read through these functions instead
//! (`#[serde(deserialize_with = ...)]`), which fail with serde's "invalid length" error at the
//! array (its key and line).

use serde::de::{Deserialize, Deserializer, Error, IgnoredAny, SeqAccess, Visitor};
use std::fmt;
use std::marker::PhantomData;

/// `[T; 2]` from an array of exactly two elements.
struct Exact2<T>([T; 2]);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Exact2<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Exact2<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of 2 elements")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Exact2<T>, A::Error> {
                let a = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(0, &self))?;
                let b = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(1, &self))?;
                let mut len = 2usize;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    len += 1;
                }
                if len != 2 {
                    return Err(A::Error::invalid_length(len, &self));
                }
                Ok(Exact2([a, b]))
            }
        }
        d.deserialize_seq(V(PhantomData))
    }
}

/// A `[T; 2]` field.
pub(crate) fn pair<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<[T; 2], D::Error> {
    Exact2::deserialize(d).map(|e| e.0)
}

/// An `Option<[T; 2]>` field (with `#[serde(default)]`: absent is `None`).
pub(crate) fn opt_pair<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<[T; 2]>, D::Error> {
    Option::<Exact2<T>>::deserialize(d).map(|o| o.map(|e| e.0))
}

/// An `Option<Vec<[T; 2]>>` field (with `#[serde(default)]`).
pub(crate) fn opt_pairs<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Vec<[T; 2]>>, D::Error> {
    Option::<Vec<Exact2<T>>>::deserialize(d).map(|o| o.map(|v| v.into_iter().map(|e| e.0).collect()))
}
