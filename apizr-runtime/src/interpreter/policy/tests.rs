//! mellea's policy assertions (defaults, presets, package specifiers, merging) and precise
//! errors for bad documents.

use super::*;

#[test]
fn defaults_and_presets_match_mellea() {
    let p = CapabilityPolicy::default();
    assert_eq!(p.timeout, 30.0);
    assert!(p.artifact_export_paths.is_empty());
    assert_eq!((p.stdout_max_bytes, p.stderr_max_bytes), (None, None));
    assert!(!p.network_access && !p.package_installation && !p.subprocess_execution);
    assert!(p.env_var_access);
    let local = CapabilityPolicy::local();
    assert_eq!(
        (
            local.network_access,
            local.package_installation,
            local.subprocess_execution,
            local.env_var_access,
            local.timeout
        ),
        (false, false, true, true, 30.0)
    );
    let docker = CapabilityPolicy::docker();
    assert_eq!(
        (
            docker.network_access,
            docker.package_installation,
            docker.subprocess_execution,
            docker.env_var_access,
            docker.timeout
        ),
        (false, true, true, true, 60.0)
    );
    assert_eq!(
        CapabilityPolicy::from_json_str("{}").unwrap(),
        CapabilityPolicy::default()
    );
}

#[test]
fn package_specifiers_follow_mellea_rules() {
    for ok in [
        "numpy",
        "pandas>=1.0",
        "scipy==1.10.0",
        "pkg @ git+https://example.invalid/x",
    ] {
        assert!(validate_package(ok).is_ok(), "{ok}");
    }
    for empty in ["", "   "] {
        assert!(validate_package(empty).unwrap_err().contains("non-empty"));
    }
    for flag in ["-r", "--index-url", " -e ."] {
        assert!(validate_package(flag).unwrap_err().contains("flag-style"));
    }
    let err = CapabilityPolicy::from_json_str(
        r#"{"package_installation": true, "packages": ["numpy", "--index-url=http://x"]}"#,
    )
    .unwrap_err();
    assert_eq!(err.path, "packages[1]");
    assert!(err.expected.contains("flag-style"));
}

#[test]
fn packages_merge_without_duplicates_and_force_installation() {
    let p = CapabilityPolicy::local()
        .with_packages(&["numpy".into(), "pandas".into()])
        .with_packages(&["pandas".into(), "cowsay".into()]);
    assert_eq!(p.packages, ["numpy", "pandas", "cowsay"]);
    assert!(p.package_installation);
    assert!(
        !CapabilityPolicy::local()
            .with_packages(&[])
            .package_installation
    );
}

#[test]
fn bad_documents_name_the_field() {
    let cases = [
        (r#"{"timeout": 0}"#, "timeout"),
        (r#"{"timeout": -1}"#, "timeout"),
        (r#"{"packages": ["numpy"]}"#, "packages"),
        (
            r#"{"filesystem_read_roots": ["relative/path"]}"#,
            "filesystem_read_roots[0]",
        ),
        (
            r#"{"filesystem_write_roots": ["/a/../b"]}"#,
            "filesystem_write_roots[0]",
        ),
        (
            r#"{"artifact_export_paths": ["../up"]}"#,
            "artifact_export_paths[0]",
        ),
        (r#"{"env": ["HOME"], "env_var_access": false}"#, "env"),
        (r#"{"env": ["1BAD"]}"#, "env[0]"),
        (r#"{"memory_bytes": 1024}"#, "memory_bytes"),
    ];
    for (doc, path) in cases {
        let err = CapabilityPolicy::from_json_str(doc).unwrap_err();
        assert_eq!(err.path, path, "{doc}: {err}");
    }
    let err = CapabilityPolicy::from_json_str("{\n  \"network\": true\n}").unwrap_err();
    assert_eq!(err.path, "line 2 column 11");
    assert!(
        err.expected.starts_with("unknown field `network`"),
        "{}",
        err.expected
    );
    let err = CapabilityPolicy::from_json_str(r#"{"declared_only": ["telepathy"]}"#).unwrap_err();
    assert!(
        err.expected.contains("unknown variant `telepathy`"),
        "{}",
        err.expected
    );
}
