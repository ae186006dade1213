"""Knowledge bases that follow a folder or a git repository: only what changed is indexed again."""
