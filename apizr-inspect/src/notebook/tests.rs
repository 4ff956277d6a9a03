use super::cells::{clean_cell, dedent, has_prompts, splitlines_keepends};

#[test]
fn dedent_like_textwrap() {
    // Vectors checked against CPython 3.11 `textwrap.dedent`.
    assert_eq!(dedent("  a\n    b\n"), "a\n  b\n");
    assert_eq!(dedent("  a\n  \n  b"), "a\n\nb");
    assert_eq!(dedent("\ta\n  b\n"), "\ta\n  b\n");
    assert_eq!(dedent("x\n   \n"), "x\n\n");
    assert_eq!(dedent("    "), "");
}

#[test]
fn cleanup_like_ipython() {
    assert_eq!(clean_cell(""), "\n");
    assert_eq!(clean_cell("x = 1"), "x = 1\n");
    assert_eq!(clean_cell("\n  \n   y = 2\n   z = 3"), "y = 2\nz = 3\n");
    assert_eq!(clean_cell("a\r\nb\r\n"), "a\r\nb\r\n");
    assert_eq!(
        splitlines_keepends("a\rb\r\nc\x0cd"),
        vec!["a\r", "b\r\n", "c\x0c", "d"]
    );
}

#[test]
fn prompts_are_detected() {
    assert!(has_prompts(">>> x = 1\n"));
    assert!(has_prompts("In [3]: x = 1\n"));
    assert!(!has_prompts("x = '>>>'\n"));
    assert!(!has_prompts("x = 1\n"));
}
