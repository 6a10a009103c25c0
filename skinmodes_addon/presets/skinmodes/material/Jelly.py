import bpy

settings = bpy.context.object.skinmodes  # type: ignore[union-attr]

settings.material_preset = "JELLY"
settings.wobble_hz = 1.5
settings.damping_ratio = 0.1
settings.poisson_ratio = 0.3
settings.youngs_modulus = 2000.0
settings.density = 1000.0
settings.amount = 1.5
settings.swing_appendages = True
