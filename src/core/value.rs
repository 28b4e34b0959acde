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
    /// JSON text, as `JSON.stringify` writes it, as a `Value`; None when it is not JSON.
    pub fn from_json(text: &str) -> Option<Value> {
        json::parse(text)
    }

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

/// JSON text (as `JSON.stringify` writes it) → `Value`.
mod json {
    use crate::core::value::Value;

    pub(super) fn parse(text: &str) -> Option<Value> {
        let mut p = Parser { s: text.as_bytes(), at: 0 };
        let v = p.value()?;
        p.ws();
        (p.at == p.s.len()).then_some(v)
    }

    struct Parser<'a> {
        s: &'a [u8],
        at: usize,
    }

    impl Parser<'_> {
        fn ws(&mut self) {
            while self.s.get(self.at).is_some_and(|c| c.is_ascii_whitespace()) {
                self.at += 1;
            }
        }

        fn eat(&mut self, c: u8) -> bool {
            self.ws();
            let ok = self.s.get(self.at) == Some(&c);
            self.at += ok as usize;
            ok
        }

        fn word(&mut self, w: &str, v: Value) -> Option<Value> {
            self.s[self.at..].starts_with(w.as_bytes()).then(|| {
                self.at += w.len();
                v
            })
        }

        fn value(&mut self) -> Option<Value> {
            self.ws();
            match *self.s.get(self.at)? {
                b'{' => {
                    self.at += 1;
                    let mut props = Vec::new();
                    if self.eat(b'}') {
                        return Some(Value::Object(props));
                    }
                    loop {
                        self.ws();
                        let key = self.string()?;
                        if !self.eat(b':') {
                            return None;
                        }
                        props.push((key, self.value()?));
                        if self.eat(b'}') {
                            return Some(Value::Object(props));
                        }
                        if !self.eat(b',') {
                            return None;
                        }
                    }
                }
                b'[' => {
                    self.at += 1;
                    let mut items = Vec::new();
                    if self.eat(b']') {
                        return Some(Value::Array(items));
                    }
                    loop {
                        items.push(self.value()?);
                        if self.eat(b']') {
                            return Some(Value::Array(items));
                        }
                        if !self.eat(b',') {
                            return None;
                        }
                    }
                }
                b'"' => self.string().map(Value::String),
                b't' => self.word("true", Value::Bool(true)),
                b'f' => self.word("false", Value::Bool(false)),
                b'n' => self.word("null", Value::Null),
                _ => {
                    let start = self.at;
                    while self
                        .s
                        .get(self.at)
                        .is_some_and(|c| matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                    {
                        self.at += 1;
                    }
                    std::str::from_utf8(&self.s[start..self.at]).ok()?.parse().ok().map(Value::Number)
                }
            }
        }

        fn hex4(&mut self) -> Option<u32> {
            let h = std::str::from_utf8(self.s.get(self.at..self.at + 4)?).ok()?;
            self.at += 4;
            u32::from_str_radix(h, 16).ok()
        }

        /// A string, the cursor on its opening quote.
        fn string(&mut self) -> Option<String> {
            if self.s.get(self.at) != Some(&b'"') {
                return None;
            }
            self.at += 1;
            let mut out = Vec::new();
            loop {
                // The run of plain bytes up to the next quote or escape, copied at once.
                let run = self.s.get(self.at..)?.iter().position(|&c| c == b'"' || c == b'\\')?;
                out.extend_from_slice(&self.s[self.at..self.at + run]);
                self.at += run;
                let c = self.s[self.at];
                self.at += 1;
                match c {
                    b'"' => return String::from_utf8(out).ok(),
                    b'\\' => {
                        let e = *self.s.get(self.at)?;
                        self.at += 1;
                        let ch = match e {
                            b'"' => '"',
                            b'\\' => '\\',
                            b'/' => '/',
                            b'b' => '\u{8}',
                            b'f' => '\u{c}',
                            b'n' => '\n',
                            b'r' => '\r',
                            b't' => '\t',
                            b'u' => {
                                let hi = self.hex4()?;
                                let code = if (0xD800..0xDC00).contains(&hi) && self.s[self.at..].starts_with(b"\\u") {
                                    let save = self.at;
                                    self.at += 2;
                                    match self.hex4()? {
                                        lo @ 0xDC00..0xE000 => 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00),
                                        _ => {
                                            self.at = save;
                                            hi
                                        }
                                    }
                                } else {
                                    hi
                                };
                                // A lone surrogate reads as U+FFFD, as napi's own UTF-8 conversion has it.
                                char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
                            }
                            _ => return None,
                        };
                        out.extend_from_slice(ch.encode_utf8(&mut [0u8; 4]).as_bytes());
                    }
                    _ => unreachable!("the run stops at a quote or an escape"),
                }
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::parse;
        use crate::core::value::Value;

        #[test]
        fn reads_what_json_stringify_writes() {
            let v = parse(r#"{"command":["/bin/echo","a \"b\"\\ \u00e9 \ud83d\ude00 \ud800 x\n"],"env":[{"PATH":"/bin"}],"n":-1.5e+21,"t":true,"f":false,"z":null,"o":{}}"#)
                .unwrap();
            assert_eq!(
                v.get("command"),
                &Value::Array(vec![
                    Value::String("/bin/echo".into()),
                    Value::String("a \"b\"\\ \u{e9} \u{1f600} \u{fffd} x\n".into())
                ])
            );
            assert_eq!(
                v.get("env"),
                &Value::Array(vec![Value::Object(vec![("PATH".into(), Value::String("/bin".into()))])])
            );
            assert_eq!(v.get("n"), &Value::Number(-1.5e21));
            assert_eq!(v.get("t"), &Value::Bool(true));
            assert_eq!(v.get("f"), &Value::Bool(false));
            assert_eq!(v.get("z"), &Value::Null);
            assert_eq!(v.get("o"), &Value::Object(vec![]));
        }

        #[test]
        fn refuses_what_is_not_json() {
            for bad in ["", "{", "[1,]", "{\"a\" 1}", "\"open", "tru", "{\"a\":1} x", "\"\\q\""] {
                assert_eq!(parse(bad), None, "{bad:?}");
            }
        }
    }
}
