//! Values as JS gave them, before any meaning is read into them. The binding converts a JS value
//! into a `Value` (conversion only); the rules about what a value means (`request.rs` for
//! launches, `group::check_signal` for signals) read it here, in one place, and name a bad value
//! in the error the way JS would print it.

#[derive(Debug, Clone, Default, PartialEq)]
pub enum Value {
    #[default]
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Value>),
    /// Own enumerable properties, in order.
    Object(Vec<(String, Value)>),
    Function,
    /// Anything else, by its `typeof` (symbol, bigint).
    Other(&'static str),
    /// An object or array past `MAX_DEPTH` levels, inside itself, or past `MAX_VALUES` read, not
    /// read: a launch that holds one is refused rather than read cut short.
    TooDeep,
}

/// How many levels of objects and arrays of a value are read, the value itself the first: a
/// launch's options need four (`readiness.http.status.min`), and one that refers to itself
/// would otherwise be read forever.
pub const MAX_DEPTH: u32 = 32;

/// How many values (objects, arrays, their members) one conversion reads at most: past it, the
/// rest is `TooDeep`. A launch's options are a few dozen; an env of thousands of names fits.
pub const MAX_VALUES: u32 = 1 << 16;

impl Value {
    /// Absent: `undefined` or `null`, which options treat alike.
    pub fn is_absent(&self) -> bool {
        matches!(self, Value::Undefined | Value::Null)
    }

    /// The property `key` of an object (`Undefined` when missing or not an object).
    pub fn get(&self, key: &str) -> &Value {
        match self {
            Value::Object(props) => {
                props.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v).unwrap_or(&Value::Undefined)
            }
            _ => &Value::Undefined,
        }
    }

    /// The value as an error message names it: strings quoted, numbers as JS prints them,
    /// objects by their kind.
    pub fn describe(&self) -> String {
        match self {
            Value::Undefined => "undefined".into(),
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => number(*n),
            Value::String(s) => format!("{s:?}"),
            Value::Array(_) => "an array".into(),
            Value::Object(_) => "object".into(),
            Value::Function => "function".into(),
            Value::Other(kind) => (*kind).into(),
            Value::TooDeep => "a value nested too deep".into(),
        }
    }

    /// Where a part nested past `MAX_DEPTH` is, as the keys (or indices) that lead to it.
    pub fn too_deep_at(&self) -> Option<Vec<String>> {
        let (key, inner) = match self {
            Value::TooDeep => return Some(Vec::new()),
            Value::Array(items) => {
                items.iter().enumerate().find_map(|(i, v)| Some((i.to_string(), v.too_deep_at()?)))?
            }
            Value::Object(props) => props.iter().find_map(|(k, v)| Some((k.clone(), v.too_deep_at()?)))?,
            _ => return None,
        };
        Some(std::iter::once(key).chain(inner).collect())
    }
}

/// A number as JS prints it (`Infinity`, not `inf`).
pub fn number(n: f64) -> String {
    if n == f64::INFINITY {
        "Infinity".into()
    } else if n == f64::NEG_INFINITY {
        "-Infinity".into()
    } else {
        n.to_string()
    }
}
