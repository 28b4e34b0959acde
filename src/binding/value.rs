//! JS value → core `Value`: conversion only. The meaning is read by the core.

use crate::core::value::Value;
use napi::bindgen_prelude::{Array, Object, Unknown, ValueType};
use napi::JsValue;

/// How deep objects are followed: a launch request is `{ options: { env: { NAME: value } } }`.
const DEPTH: u32 = 4;

fn to_value(v: &Unknown, depth: u32) -> napi::Result<Value> {
    // SAFETY (each cast): the value's type was just checked to be the one cast to.
    Ok(match v.get_type()? {
        ValueType::Undefined => Value::Undefined,
        ValueType::Null => Value::Null,
        ValueType::Boolean => Value::Bool(unsafe { v.cast::<bool>()? }),
        ValueType::Number => Value::Number(unsafe { v.cast::<f64>()? }),
        ValueType::String => Value::String(unsafe { v.cast::<String>()? }),
        ValueType::Function => Value::Function,
        ValueType::Symbol => Value::Other("symbol"),
        ValueType::BigInt => Value::Other("bigint"),
        ValueType::Object if v.is_array()? => {
            let arr = unsafe { v.cast::<Array>()? };
            let mut items = Vec::new();
            if depth > 0 {
                for i in 0..arr.len() {
                    items.push(match arr.get::<Unknown>(i)? {
                        Some(item) => to_value(&item, depth - 1)?,
                        None => Value::Undefined,
                    });
                }
            }
            Value::Array(items)
        }
        ValueType::Object => {
            let obj = unsafe { v.cast::<Object>()? };
            let mut props = Vec::new();
            if depth > 0 {
                for key in Object::keys(&obj)? {
                    let value = match obj.get::<Unknown>(&key)? {
                        Some(item) => to_value(&item, depth - 1)?,
                        None => Value::Undefined,
                    };
                    props.push((key, value));
                }
            }
            Value::Object(props)
        }
        _ => Value::Other("object"),
    })
}

/// A whole request or option value.
pub(crate) fn value_of(v: &Unknown) -> napi::Result<Value> {
    to_value(v, DEPTH)
}

/// The fields of a launch request, which the JS layer builds: read by name, where the generic walk
/// lists the keys first and converts each name twice (a third of a launch call's native time).
const REQUEST_FIELDS: [&str; 6] = ["command", "options", "env", "cwd", "containment", "logFiles"];

/// A launch request (`{ command, options, env, cwd, containment, logFiles }`) as a `Value`: the object,
/// or its JSON text where the JS layer found JSON faithful to it (`wire` in `lib/process/request-wire.js`): one
/// string crosses instead of a walk of the object one napi call at a time, which took about
/// 15 µs of the JS thread per launch.
pub(crate) fn request_of(v: &Unknown) -> napi::Result<Value> {
    if v.get_type()? == ValueType::String {
        // SAFETY: checked just above to be a string.
        let text = unsafe { v.cast::<String>()? };
        // Its fields are read by name: an absent one reads as `undefined`, as in the object.
        return match Value::from_json(&text) {
            Some(request @ Value::Object(_)) => Ok(request),
            _ => Err(napi::Error::from_reason("procvisor: malformed launch request")),
        };
    }
    if v.get_type()? != ValueType::Object || v.is_array()? {
        return value_of(v);
    }
    // SAFETY: checked just above to be a non-array object.
    let obj = unsafe { v.cast::<Object>()? };
    let mut props = Vec::with_capacity(REQUEST_FIELDS.len());
    for key in REQUEST_FIELDS {
        let value = match obj.get::<Unknown>(key)? {
            Some(item) => to_value(&item, DEPTH - 1)?,
            None => Value::Undefined,
        };
        props.push((key.to_string(), value));
    }
    Ok(Value::Object(props))
}
