"""The ground floor: small helpers every layer may import, private to kafkatest.

Each imports only the standard library, third-party packages and its neighbours here:
`held` (a class holding a part instead of inheriting it), `exposure` (whether an address
reaches beyond loopback), `lean_imports` (imports on first use, and moved names),
`tempdirs`, `background_start`, `project_files` (the per-user cache and the project's
ini), `bounded_json` and `bounded_yaml` (files read within `kafkatest.limits`)."""
