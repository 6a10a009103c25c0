import bpy

settings = bpy.context.object.skinmodes  # type: ignore[union-attr]

settings.material_preset = "MUSCLE"
settings.wobble_hz = 5.0
settings.damping_ratio = 0.35
settings.poisson_ratio = 0.4
settings.youngs_modulus = 50000.0
settings.density = 1060.0
settings.amount = 0.7
settings.swing_appendages = True
