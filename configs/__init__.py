"""The YAML configs; a wheel ships this folder as the package ``lipnorm_exp.configs``."""
