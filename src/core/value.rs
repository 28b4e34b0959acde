//! Values as JS gave them, before any meaning is read into them. The binding converts a JS value
//! into a `Value` (conversion only); the rules about what a value means (`request.rs` for
//! launches, `group::check_signal` for signals) read it here, in one place, and name a bad value
//! in the error the way JS would print it.

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
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
}

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
        }
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
