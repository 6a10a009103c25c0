import bpy

settings = bpy.context.object.skinmodes  # type: ignore[union-attr]

settings.material_preset = "RUBBER"
settings.wobble_hz = 8.0
settings.damping_ratio = 0.1
settings.poisson_ratio = 0.45
settings.youngs_modulus = 1000000.0
settings.density = 1100.0
settings.amount = 1.0
settings.swing_appendages = False
