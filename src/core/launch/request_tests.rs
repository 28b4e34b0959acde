//! The rules of `request.rs`, value by value.

use super::*;
use crate::core::launch::command::Pty;
use crate::core::launch::options::window_size;

fn obj(props: &[(&str, Value)]) -> Value {
    Value::Object(props.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
}

fn s(v: &str) -> Value {
    Value::String(v.into())
}

fn req(command: Value, options: Value) -> Request {
    Request { command, options, cwd: "/tmp".into(), ..Request::default() }
}

#[test]
fn a_shell_command_runs_under_sh_with_the_defaults() {
    let l = parse(Face::Shell, &req(s("echo hi"), Value::Undefined)).unwrap();
    assert_eq!(l.spec.argv, vec!["/bin/sh", "-c", "echo hi"]);
    assert_eq!(l.spec.retain_bytes, Some(1024 * 1024));
    assert_eq!(l.spec.stdin, StdinMode::Pipe);
    assert_eq!(l.spec.timeout_ms, None);
}

#[test]
fn durations_round_up_and_zero_means_none() {
    let l = parse(Face::Argv, &req(Value::Array(vec![s("true")]), obj(&[("timeout", Value::Number(1.5))]))).unwrap();
    assert_eq!(l.spec.timeout_ms, Some(2));
    let l = parse(Face::Argv, &req(Value::Array(vec![s("true")]), obj(&[("timeout", Value::Number(0.0))]))).unwrap();
    assert_eq!(l.spec.timeout_ms, None);
    for bad in [Value::Number(-1.0), Value::Number(f64::NAN), Value::Number(f64::INFINITY), s("100"), obj(&[])] {
        let e = parse(Face::Argv, &req(Value::Array(vec![s("true")]), obj(&[("timeout", bad)]))).unwrap_err();
        assert_eq!(e.code(), "INVALID_PROCESS_OPTION");
    }
}

#[test]
fn env_layers_merge_and_undefined_drops() {
    let layers = vec![obj(&[("PATH", s("/bin")), ("A", s("1"))]), obj(&[("A", s("2"))])];
    let r = Request {
        env: layers,
        ..req(Value::Array(vec![s("true")]), obj(&[("env", obj(&[("PATH", Value::Undefined)]))]))
    };
    assert_eq!(parse(Face::Argv, &r).unwrap().spec.env, vec![("A".to_string(), "2".to_string())]);
}

#[test]
fn bad_values_get_their_own_codes() {
    let argv = |v: Value| parse(Face::Argv, &req(v, Value::Undefined)).unwrap_err().code();
    assert_eq!(argv(s("ls")), "INVALID_PROCESS_COMMAND");
    assert_eq!(argv(Value::Array(vec![])), "INVALID_PROCESS_COMMAND");
    assert_eq!(argv(Value::Array(vec![s("echo"), Value::Number(5.0)])), "INVALID_PROCESS_COMMAND");
    let opt = |o: Value| parse(Face::Shell, &req(s("true"), o)).unwrap_err().code();
    assert_eq!(opt(Value::Number(42.0)), "INVALID_PROCESS_OPTION");
    assert_eq!(opt(obj(&[("cwd", Value::Number(5.0))])), "INVALID_PROCESS_CWD");
    assert_eq!(opt(obj(&[("env", Value::Array(vec![]))])), "INVALID_PROCESS_ENVIRONMENT");
    assert_eq!(opt(obj(&[("env", obj(&[("A", Value::Null)]))])), "INVALID_PROCESS_ENVIRONMENT");
    assert_eq!(opt(obj(&[("maxRetainedBytes", Value::Number(1.5))])), "INVALID_PROCESS_OPTION");
    assert_eq!(opt(obj(&[("stdinMode", s("inherit"))])), "INVALID_PROCESS_OPTION");
    assert_eq!(opt(obj(&[("limits", obj(&[("nice", Value::Number(5.0))]))])), "INVALID_PROCESS_OPTION");
    assert_eq!(opt(obj(&[("limits", obj(&[("openFiles", Value::Number(2f64.powi(64)))]))])), "INVALID_PROCESS_OPTION");
}

#[test]
fn a_terminal_has_a_size_and_a_term() {
    let argv = || Value::Array(vec![s("sh")]);
    let l = parse(Face::Argv, &req(argv(), obj(&[("pty", Value::Bool(true))]))).unwrap();
    assert_eq!(l.spec.pty, Some(Pty { cols: 80, rows: 24, term: "xterm-256color".into() }));
    assert_eq!(l.spec.env_var("TERM"), Some("xterm-256color"));
    let o = obj(&[
        ("pty", obj(&[("cols", Value::Number(100.0)), ("term", s("vt100"))])),
        ("env", obj(&[("TERM", s("dumb"))])),
    ]);
    let l = parse(Face::Shell, &req(s("true"), o)).unwrap();
    assert_eq!(l.spec.pty.as_ref().map(|p| (p.cols, p.rows)), Some((100, 24)));
    assert_eq!(l.spec.env_var("TERM"), Some("dumb"), "the call's TERM wins");
    for bad in [
        Value::Number(1.0),
        s("yes"),
        obj(&[("cols", Value::Number(0.0))]),
        obj(&[("rows", Value::Number(65536.0))]),
        obj(&[("cols", Value::Number(1.5))]),
        obj(&[("term", s("../x"))]),
        obj(&[("term", s(""))]),
    ] {
        let e = parse(Face::Argv, &req(argv(), obj(&[("pty", bad)]))).unwrap_err();
        assert_eq!(e.code(), "INVALID_PROCESS_OPTION");
    }
    assert_eq!(window_size(&Value::Number(100.0), &Value::Number(30.0)), Ok((100, 30)));
    assert!(window_size(&Value::Number(100.0), &Value::Undefined).is_err());
    assert!(window_size(&Value::Number(-1.0), &Value::Number(30.0)).is_err());
}

#[test]
fn a_terminal_runs_the_shell_unless_told_otherwise() {
    let r = |o: Value| req(Value::Undefined, o);
    let l = parse(Face::Terminal, &r(Value::Undefined)).unwrap();
    assert_eq!(l.spec.argv, vec!["/bin/sh"]);
    assert_eq!(l.spec.pty.as_ref().map(|p| (p.cols, p.rows)), Some((80, 24)));
    assert_eq!(l.spec.stdin, StdinMode::Pipe);
    let o = obj(&[("command", Value::Array(vec![s("top")])), ("cols", Value::Number(120.0))]);
    let l = parse(Face::Terminal, &r(o)).unwrap();
    assert_eq!(l.spec.argv, vec!["top"]);
    assert_eq!(l.spec.pty.map(|p| p.cols), Some(120));
    assert_eq!(parse(Face::Terminal, &r(obj(&[("command", s("top"))]))).unwrap_err().code(), "INVALID_PROCESS_COMMAND");
    assert_eq!(
        parse(Face::Terminal, &r(obj(&[("rows", Value::Number(0.0))]))).unwrap_err().code(),
        "INVALID_PROCESS_OPTION"
    );
    // A screen is bounded; a terminal without one is only the kernel's size.
    let huge = obj(&[("cols", Value::Number(65535.0)), ("rows", Value::Number(65535.0))]);
    assert_eq!(parse(Face::Terminal, &r(huge.clone())).unwrap_err().code(), "INVALID_PROCESS_OPTION");
    let l = parse(Face::Argv, &req(Value::Array(vec![s("sh")]), obj(&[("pty", huge)]))).unwrap();
    assert_eq!(l.spec.pty.map(|p| (p.cols, p.rows)), Some((65535, 65535)));
}

#[test]
fn paths_resolve_as_node_does() {
    assert_eq!(resolve(Path::new("/a/b"), "../c/./d"), PathBuf::from("/a/c/d"));
    assert_eq!(resolve(Path::new("/a"), "/x/.."), PathBuf::from("/"));
}

#[test]
fn a_manager_asks_for_the_node_cwd_only_when_it_needs_it() {
    let gone = || Err(std::io::Error::from_raw_os_error(2));
    let abs = obj(&[("workingDirectory", s("/srv/app/../work/"))]);
    assert_eq!(manager(&abs, gone).unwrap(), PathBuf::from("/srv/work"));
    let here = || Ok(PathBuf::from("/home/me"));
    assert_eq!(manager(&obj(&[("workingDirectory", s("ws"))]), here).unwrap(), PathBuf::from("/home/me/ws"));
    assert_eq!(manager(&Value::Undefined, here).unwrap(), PathBuf::from("/home/me"));
    for v in [Value::Undefined, obj(&[]), obj(&[("workingDirectory", s("ws"))])] {
        let e = manager(&v, gone).unwrap_err();
        assert_eq!(e.code(), "INVALID_PROCESS_CWD");
        assert!(e.to_string().contains("ENOENT"), "{e}");
    }
}

#[test]
fn a_path_that_needs_a_gone_node_cwd_names_its_option_as_the_fix() {
    let gone = || Err(std::io::Error::from_raw_os_error(2));
    let e = from_node_cwd("cks", "checkpointsDirectory", gone).unwrap_err();
    assert_eq!(e.code(), "INVALID_PROCESS_CWD");
    assert!(e.to_string().ends_with("(ENOENT); give an absolute checkpointsDirectory"), "{e}");
    assert_eq!(from_node_cwd("/a/./b/../c", "x", gone).unwrap(), PathBuf::from("/a/c"));
}

#[test]
fn a_face_is_known_by_the_name_the_js_layer_gives_it() {
    assert_eq!(Face::from_name("shell"), Some(Face::Shell));
    assert_eq!(Face::from_name("argv"), Some(Face::Argv));
    assert_eq!(Face::from_name("terminal"), Some(Face::Terminal));
    assert_eq!(Face::from_name("exec"), None);
}

/// Options `{ [name]: { k: { k: … } } }`, `levels` objects below the options, as the conversion
/// leaves them: what is past `MAX_DEPTH` (the options the first level) is not read.
fn nested_options(name: &str, levels: u32) -> Value {
    fn cut(v: &mut Value, left: u32) {
        if let Value::Object(props) = v {
            if left == 0 {
                *v = Value::TooDeep;
            } else {
                props.iter_mut().for_each(|(_, inner)| cut(inner, left - 1));
            }
        }
    }
    let mut v = obj(&[(name, (1..levels).fold(obj(&[]), |inner, _| obj(&[("k", inner)])))]);
    cut(&mut v, crate::core::value::MAX_DEPTH);
    v
}

#[test]
fn a_request_nested_too_deep_is_refused_by_the_option_that_holds_it() {
    let argv = || Value::Array(vec![s("true")]);
    let fine = parse(Face::Argv, &req(argv(), nested_options("extra", 31)));
    assert!(fine.is_ok(), "{fine:?}");
    let e = parse(Face::Argv, &req(argv(), nested_options("extra", 32))).unwrap_err();
    assert_eq!(e.code(), "INVALID_PROCESS_OPTION");
    let e = parse(Face::Argv, &req(argv(), nested_options("env", 64))).unwrap_err();
    assert_eq!(e.code(), "INVALID_PROCESS_OPTION");
    assert_eq!(
        e.to_string(),
        "invalid option env: exec options.env is nested too deep: more than 32 levels of objects and arrays, \
         an object that contains itself, or more than 65536 values"
    );
    let layer = nested_options("A", 40);
    let e = parse(Face::Shell, &Request { env: vec![layer], ..req(s("true"), Value::Undefined) }).unwrap_err();
    assert_eq!(e.code(), "INVALID_PROCESS_OPTION");
    assert!(e.to_string().contains("the manager's env is nested too deep"), "{e}");
}
