"""Sources: Git servers (GitLab, Gitea/Forgejo, GitHub, Bitbucket Data Center) and local folders
whose repositories gitreg discovers, rather than each being listed in registry.yaml."""
