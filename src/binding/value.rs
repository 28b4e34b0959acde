//! JS value → core `Value`: conversion only. The meaning is read by the core.

use crate::core::value::{Value, MAX_DEPTH};
use napi::bindgen_prelude::{Array, FromNapiValue, Object, TypeName, Unknown, ValidateNapiValue, ValueType};
use napi::{check_status, sys, JsValue};

/// `outer`: the objects and arrays that hold this value, outermost first. Past `MAX_DEPTH` of
/// them, or where the value is one of them, it is not read: a value that holds itself twice would
/// otherwise be read 2^MAX_DEPTH times.
fn to_value(v: &Unknown, outer: &mut Vec<sys::napi_value>) -> napi::Result<Value> {
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
        ValueType::Object if outer.len() as u32 >= MAX_DEPTH || holds(v, outer)? => Value::TooDeep,
        ValueType::Object => {
            outer.push(v.raw());
            let read = if v.is_array()? { array(v, outer) } else { object(v, outer) };
            outer.pop();
            read?
        }
        _ => Value::Other("object"),
    })
}

fn array(v: &Unknown, outer: &mut Vec<sys::napi_value>) -> napi::Result<Value> {
    // SAFETY: the caller checked it is an array.
    let arr = unsafe { v.cast::<Array>()? };
    let mut items = Vec::with_capacity(arr.len() as usize);
    for i in 0..arr.len() {
        items.push(match arr.get::<Unknown>(i)? {
            Some(item) => to_value(&item, outer)?,
            None => Value::Undefined,
        });
    }
    Ok(Value::Array(items))
}

fn object(v: &Unknown, outer: &mut Vec<sys::napi_value>) -> napi::Result<Value> {
    // SAFETY: the caller checked it is an object.
    let obj = unsafe { v.cast::<Object>()? };
    let mut props = Vec::new();
    for key in Object::keys(&obj)? {
        let value = match obj.get::<Unknown>(&key)? {
            Some(item) => to_value(&item, outer)?,
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
    to_value(v, &mut Vec::new())
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
