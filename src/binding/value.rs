//! JS value → core `Value`: conversion only. The meaning is read by the core.

use crate::core::value::{Value, MAX_DEPTH, MAX_VALUES};
use napi::bindgen_prelude::{Array, FromNapiValue, Object, TypeName, Unknown, ValidateNapiValue, ValueType};
use napi::{check_status, sys, JsValue};

/// One conversion's walk. `outer`: the objects and arrays that hold the value being read,
/// outermost first; past `MAX_DEPTH` of them, or where the value is one of them, it is not read:
/// a value that holds itself twice would otherwise be read 2^MAX_DEPTH times. `left`: how many
/// more values may be read. A value that holds one object many times over without holding itself
/// (each level two references to the next) is as long to read: past the budget, no object or
/// array is read, so no JS value can hold the thread for long.
struct Walk {
    outer: Vec<sys::napi_value>,
    left: u32,
}

fn to_value(v: &Unknown, walk: &mut Walk) -> napi::Result<Value> {
    walk.left = walk.left.saturating_sub(1);
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
        ValueType::Object if walk.left == 0 || walk.outer.len() as u32 >= MAX_DEPTH || holds(v, &walk.outer)? => {
            Value::TooDeep
        }
        ValueType::Object => {
            walk.outer.push(v.raw());
            let read = if v.is_array()? { array(v, walk) } else { object(v, walk) };
            walk.outer.pop();
            read?
        }
        _ => Value::Other("object"),
    })
}

fn array(v: &Unknown, walk: &mut Walk) -> napi::Result<Value> {
    // SAFETY: the caller checked it is an array.
    let arr = unsafe { v.cast::<Array>()? };
    let mut items = Vec::with_capacity(arr.len() as usize);
    for i in 0..arr.len() {
        items.push(match arr.get::<Unknown>(i)? {
            Some(item) => to_value(&item, walk)?,
            None => Value::Undefined,
        });
    }
    Ok(Value::Array(items))
}

fn object(v: &Unknown, walk: &mut Walk) -> napi::Result<Value> {
    // SAFETY: the caller checked it is an object.
    let obj = unsafe { v.cast::<Object>()? };
    let mut props = Vec::new();
    for key in Object::keys(&obj)? {
        let value = match obj.get::<Unknown>(&key)? {
            Some(item) => to_value(&item, walk)?,
            None => Value::Undefined,
        };
        props.push((key, value));
    }
    Ok(Value::Object(props))
}

/// Whether `v` is one of the objects that hold it.
fn holds(v: &Unknown, outer: &[sys::napi_value]) -> napi::Result<bool> {
    let env = v.value().env;
    for &o in outer {
        let mut same = false;
        // SAFETY: both are handles of this call's scope.
        check_status!(unsafe { sys::napi_strict_equals(env, o, v.raw(), &mut same) })?;
        if same {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Any JS value, for the core's rules to read (a signal, a manager's options, a window size).
pub(crate) fn value_of(v: &Unknown) -> napi::Result<Value> {
    to_value(v, &mut Walk { outer: Vec::new(), left: MAX_VALUES })
}

/// A field of a typed object that the core reads as JS gave it (`unknown` to TypeScript).
pub struct Loose(pub Value);

impl FromNapiValue for Loose {
    unsafe fn from_napi_value(env: sys::napi_env, v: sys::napi_value) -> napi::Result<Self> {
        Ok(Loose(value_of(&Unknown::from_napi_value(env, v)?)?))
    }
}

impl TypeName for Loose {
    fn type_name() -> &'static str {
        "unknown"
    }

    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl ValidateNapiValue for Loose {}
