"""Sources: Git servers (GitLab, Gitea/Forgejo, GitHub, Bitbucket Data Center) and local folders
whose repositories gitreg surveys, rather than each being listed in registry.yaml."""
